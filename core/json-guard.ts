// What request text must be before anything recursive (ajv, canonical key
// sorting, JSON.stringify into jsonb) or the store sees it: JSON nested at most
// MAX_JSON_DEPTH levels, and text PostgreSQL can hold — no U+0000, which text and
// jsonb cannot store, and no lone UTF-16 surrogate, which is not Unicode text.
// The walk keeps its own stack, so a hostile depth cannot overflow the check itself.
import type { FieldError } from './errors/palai-error.js';
import { firstUnstorable } from './json.js';

/** Levels of objects and arrays a request body may nest; generous for real JSON Schemas. */
export const MAX_JSON_DEPTH = 64;

/** Field errors reported at most, so a body full of bad text still gets a small answer. */
const MAX_REPORTED = 20;

/** Why `text` cannot be stored, or null when it can. */
export function unstorableText(text: string): string | null {
  const found = firstUnstorable(text);
  if (found === null) return null;
  return found === '\u0000' ? 'contains U+0000 (NUL), which cannot be stored' : 'contains a lone UTF-16 surrogate, which is not Unicode text';
}

const escapeSegment = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export interface JsonGuardResult {
  errors: FieldError[];
  /** True when some value nests deeper than MAX_JSON_DEPTH. */
  tooDeep: boolean;
}

/**
 * Every place in `value` that nests too deep or holds unstorable text, as JSON
 * pointers in document order. A member name that cannot be stored is reported at
 * its object, so no pointer carries the bad text back.
 */
export function inspectJson(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonGuardResult {
  const errors: FieldError[] = [];
  let tooDeep = false;
  // Depth of a value: 1 for the top-level object or array, +1 for each container inside.
  const stack: { value: unknown; pointer: string; depth: number }[] = [{ value, pointer: '', depth: 0 }];
  while (stack.length > 0 && errors.length < MAX_REPORTED) {
    const { value: current, pointer, depth } = stack.pop()!;
    if (typeof current === 'string') {
      const why = unstorableText(current);
      if (why) errors.push({ pointer, detail: why });
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > maxDepth) {
      tooDeep = true;
      errors.push({ pointer, detail: `nests deeper than ${maxDepth} levels of objects and arrays, the maximum` });
      continue;
    }
    const children: { value: unknown; pointer: string; depth: number }[] = [];
    if (Array.isArray(current)) {
      current.forEach((item, index) => children.push({ value: item, pointer: `${pointer}/${index}`, depth: depth + 1 }));
    } else {
      for (const [key, item] of Object.entries(current)) {
        const why = unstorableText(key);
        if (why) errors.push({ pointer, detail: `has a member name that ${why}` });
        else children.push({ value: item, pointer: `${pointer}/${escapeSegment(key)}`, depth: depth + 1 });
      }
    }
    // Reversed, so the stack pops them in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return { errors, tooDeep };
}
