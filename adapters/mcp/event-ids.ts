// SSE event ids of a tools/call stream are positions in the response's journal
// (`<response id>.<sequence>`), so a host that lost its stream resumes with
// Last-Event-ID on any Palai process: the journal, not a process's memory, is
// what gets replayed.

export interface JournalPosition {
  responseId: string;
  /** The last journal sequence the host has seen (-1: none yet). */
  sequence: number;
}

export const eventId = (position: JournalPosition): string => `${position.responseId}.${position.sequence}`;

/** Null for an id Palai did not mint. */
export function parseEventId(id: string): JournalPosition | null {
  const match = /^(resp_[0-9a-z]{26})\.(-1|0|[1-9]\d{0,9})$/.exec(id);
  return match ? { responseId: match[1], sequence: Number(match[2]) } : null;
}
