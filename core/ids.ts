// Ids are a prefix plus a time-ordered, Crockford base32 body (48-bit ms clock,
// 80 random bits, counting up within a millisecond), so sorting by id is sorting
// by creation: cursors are just ids.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'proj'
  | 'key'
  | 'agt'
  | 'agtrev'
  | 'ses'
  | 'item'
  | 'resp'
  | 'msg'
  | 'fc'
  | 'call'
  | 'mconn'
  | 'sec'
  | 'osub'
  | 'dlv'
  | 'ragt'
  | 'qc'
  | 'mcps'
  | 'sbot'
  | 'nen'
  | 'ninv';

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

/** The smallest id of `prefix` minted at `ms`: every id minted before sorts below it, every one from then on not. */
export function idFloor(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encode(BigInt(Math.max(0, Math.floor(ms))), 10)}${encode(0n, 16)}`;
}

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  // Within one millisecond the random part counts up, so this process's ids still sort in minting order.
  const random = now === lastMs && lastRandom < RANDOM_MAX ? lastRandom + 1n : BigInt('0x' + randomBytes(10).toString('hex'));
  lastMs = now;
  lastRandom = random;
  return `${prefix}_${encode(BigInt(now), 10)}${encode(random, 16)}`;
}

const OUTPUT_ITEM_ID = /^(?:msg|fc)_([0-9a-hjkmnp-tv-z]{26})_([0-9a-hjkmnp-tv-z]{4})$/;

/**
 * The id of an item a run adds to its response's output: the response's id body and the item's place
 * in the output, so an item_reference to it leads to its response at once (core/responses/item-references.ts).
 */
export function outputItemId(prefix: 'msg' | 'fc', responseId: string, outputIndex: number): string {
  return `${prefix}_${responseId.slice(responseId.indexOf('_') + 1)}_${encode(BigInt(outputIndex), 4)}`;
}

/** The response an output item id names (outputItemId), or null for any other id. */
export function responseOfOutputItem(itemId: string): string | null {
  const match = OUTPUT_ITEM_ID.exec(itemId);
  return match ? `resp_${match[1]}` : null;
}
