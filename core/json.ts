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

export const unixSeconds = (date: Date | string | null): number | null =>
  date === null ? null : Math.floor(new Date(date).getTime() / 1000);
