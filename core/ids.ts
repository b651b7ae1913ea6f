// Ids are a prefix plus a time-ordered, Crockford base32 body (48-bit ms clock,
// 80 random bits), so sorting by id is sorting by creation: cursors are just ids.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix = 'proj' | 'key' | 'agt' | 'agtrev' | 'ses' | 'item' | 'resp' | 'msg' | 'fc' | 'call';

function encode(value: bigint, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  const random = BigInt('0x' + randomBytes(10).toString('hex'));
  return `${prefix}_${encode(BigInt(now), 10)}${encode(random, 16)}`;
}
