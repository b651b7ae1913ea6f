// Ids are a prefix plus a time-ordered, Crockford base32 body (48-bit ms clock,
// 80 random bits, counting up within a millisecond), so sorting by id is sorting
// by creation: cursors are just ids.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  'proj' | 'key' | 'agt' | 'agtrev' | 'ses' | 'item' | 'resp' | 'msg' | 'fc' | 'call' | 'mconn' | 'sec' | 'osub' | 'dlv' | 'ragt' | 'qc' | 'mcps' | 'sbot';

function encode(value: bigint, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

const RANDOM_MAX = (1n << 80n) - 1n;
let lastMs = -1;
let lastRandom = 0n;

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  // Within one millisecond the random part counts up, so this process's ids still sort in minting order.
  const random = now === lastMs && lastRandom < RANDOM_MAX ? lastRandom + 1n : BigInt('0x' + randomBytes(10).toString('hex'));
  lastMs = now;
  lastRandom = random;
  return `${prefix}_${encode(BigInt(now), 10)}${encode(random, 16)}`;
}
