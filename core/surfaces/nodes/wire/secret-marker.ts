// What a command's output holds where it printed a secret it was given: a
// marker naming the variable and the invocation, never the value. The
// companion puts it there before the output reaches its ledger or the hub, so
// no record of Palai's holds the value; the hub puts the value back only in
// the model's input, and only for the secrets of that same invocation
// (docs/security.md#secrets-as-ephemeral-input).

/** A secret's stand-in: `[palai-secret:GITHUB_TOKEN@ninv_…]`. */
export const secretMarker = (name: string, invocationId: string): string => `[palai-secret:${name}@${invocationId}]`;

/** Every marker in a text: the variable's name and the invocation. */
export const SECRET_MARKERS = /\[palai-secret:([A-Za-z_][A-Za-z0-9_]{0,127})@(ninv_[0-9a-hjkmnp-tv-z]{26})\]/g;

/** The shortest end of a cut-off output taken for the start of a value. */
const MIN_CUT_PREFIX = 8;

/**
 * A text with every occurrence of each value replaced by its marker, longer
 * values first (one may hold another). Output cut at its byte limit may end
 * inside a value: such an end (at least 8 characters of it, or all but the
 * last of a shorter value) is replaced too.
 */
export function markSecrets(text: string, values: Readonly<Record<string, string>>, invocationId: string, cut = false): string {
  const byLength = Object.entries(values)
    .filter(([, value]) => value.length > 0)
    .sort(([, a], [, b]) => b.length - a.length);
  let marked = text;
  for (const [name, value] of byLength) marked = marked.split(value).join(secretMarker(name, invocationId));
  if (!cut) return marked;
  for (const [name, value] of byLength) {
    for (let length = value.length - 1; length >= Math.min(MIN_CUT_PREFIX, value.length - 1) && length > 0; length--) {
      if (marked.endsWith(value.slice(0, length))) return marked.slice(0, marked.length - length) + secretMarker(name, invocationId);
    }
  }
  return marked;
}

/** Whether a text may hold a marker (a cheap test before the pattern). */
export const mayHoldSecretMarker = (text: string): boolean => text.includes('[palai-secret:');
