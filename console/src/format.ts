// Shared formatting: dates from Unix seconds, JSON shown indented.

export function formatTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return new Date(seconds * 1000).toLocaleString();
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/** A JSON text (tool arguments) indented; text that is not JSON as it is. */
export function prettyJsonText(text: string | null | undefined): string {
  if (text === null || text === undefined) return '—';
  try {
    return pretty(JSON.parse(text));
  } catch {
    return text;
  }
}

export function orDash(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  return String(value);
}

/** A DOM id from any string (response ids, URLs) for aria-labelledby. */
export function domId(prefix: string, value: string): string {
  return `${prefix}-${value.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}
