// Ids are a prefix plus a time-ordered, Crockford base32 body (48-bit ms clock,
// 80 random bits, counting up within a millisecond), so sorting by id is sorting
// by creation: cursors are just ids.
import { randomFillSync } from 'node:crypto';

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

/** Every pair of digits, by the 10 bits they encode: half the steps of one digit at a time. */
const PAIRS = Array.from({ length: 1024 }, (_, bits) => ALPHABET[bits >> 5] + ALPHABET[bits & 31]);

/** `value` (an integer below 2^53) as `length` base32 digits (an even count), most significant first. */
function encode(value: number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 2) {
    out = PAIRS[value % 1024] + out;
    value = Math.floor(value / 1024);
  }
  return out;
}

/** The 80 random bits, as two 40-bit halves: Numbers, which a BigInt costs several times over. */
const RANDOM_BYTES = 10;
const HALF = 2 ** 40;
let lastMs = -1;
let lastHigh = 0;
let lastLow = 0;

/** Random bytes are drawn a few hundred ids at a time: one call into the generator per batch, not per id. */
const pool = Buffer.alloc(RANDOM_BYTES * 256);
let poolAt = pool.length;

function drawRandom(): void {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  lastHigh = pool.readUIntBE(poolAt, 5);
  lastLow = pool.readUIntBE(poolAt + 5, 5);
  poolAt += RANDOM_BYTES;
}

/** The smallest id of `prefix` minted at `ms`: every id minted before sorts below it, every one from then on not. */
export function idFloor(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encode(Math.max(0, Math.floor(ms)), 10)}${encode(0, 16)}`;
}

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  // Within one millisecond the random part counts up, so this process's ids still sort in minting order.
  if (now !== lastMs || (lastHigh === HALF - 1 && lastLow === HALF - 1)) drawRandom();
  else if (lastLow < HALF - 1) lastLow++;
  else {
    lastLow = 0;
    lastHigh++;
  }
  lastMs = now;
  return `${prefix}_${encode(now, 10)}${encode(lastHigh, 8)}${encode(lastLow, 8)}`;
}

const OUTPUT_ITEM_ID = /^(?:msg|fc)_([0-9a-hjkmnp-tv-z]{26})_([0-9a-hjkmnp-tv-z]{4})$/;

/**
 * The id of an item a run adds to its response's output: the response's id body and the item's place
 * in the output, so an item_reference to it leads to its response at once (core/responses/item-references.ts).
 */
export function outputItemId(prefix: 'msg' | 'fc', responseId: string, outputIndex: number): string {
  return `${prefix}_${responseId.slice(responseId.indexOf('_') + 1)}_${encode(outputIndex, 4)}`;
}

/** The response an output item id names (outputItemId), or null for any other id. */
export function responseOfOutputItem(itemId: string): string | null {
  const match = OUTPUT_ITEM_ID.exec(itemId);
  return match ? `resp_${match[1]}` : null;
}
