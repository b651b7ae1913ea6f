/** JSON with object keys sorted, so equal values give equal text (spec and request comparison). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export const unixSeconds = (date: Date | string | null): number | null => (date === null ? null : Math.floor(new Date(date).getTime() / 1000));

/** U+0000 and UTF-16 surrogates without their other half: PostgreSQL's text and jsonb cannot hold them. */
const UNSTORABLE_SOURCE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.source;
const UNSTORABLE = new RegExp(UNSTORABLE_SOURCE, 'g');
const UNSTORABLE_ONE = new RegExp(UNSTORABLE_SOURCE);

/** The first character of `text` PostgreSQL cannot store, or null. */
export function firstUnstorable(text: string): string | null {
  return UNSTORABLE_ONE.exec(text)?.[0] ?? null;
}

/**
 * Text from outside (a model's stream) made storable: each character PostgreSQL
 * refuses becomes U+FFFD, so one odd byte from a provider never fails a run.
 */
export const storableText = (text: string): string => text.replace(UNSTORABLE, '\ufffd');
