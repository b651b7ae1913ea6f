// How an append is written: one journal row for all its events, as a list of
// entries that leave out what the row's response or the event's kind already
// says (migration 0033 describes the form, and palai_journal_events there is
// its one decoder). A message item's events become one entry — its deltas, and
// its text once — and a status event written from the response row (the status
// writer's) keeps only what the row will not say later. Any event that does not
// fit its entry's shape exactly is kept whole, so nothing is ever read back
// other than it was written.
import type { ResponseState } from '../../generated/protocol-schemas.js';
import { outputItemId } from '../ids.js';
import { isTerminal } from '../response-status.js';
import { responseState, type ResponseRow } from '../responses/responses.js';
import type { JournalEntry, KernelEvent } from './journal-port.js';

type Entry = Record<string, unknown>;

const fromResponseRow = new WeakSet<KernelEvent>();

/**
 * The status event for a response row as it now is, written in the transaction
 * that wrote the row: its response is rebuilt from the row when read, so the
 * journal does not hold it twice.
 */
export function statusEventOf(response: ResponseState): KernelEvent {
  const event: KernelEvent = { type: 'status', status: response.status, response };
  fromResponseRow.add(event);
  return event;
}

/**
 * The status event of a terminal change not yet written, for encoding it in the
 * statement that writes the change: a terminal entry keeps only the status (its
 * response is the row's when read), so nothing of the row is needed yet.
 */
export function terminalStatusEvent(status: ResponseState['status']): KernelEvent {
  if (!isTerminal(status)) throw new RangeError(`${status} is not a terminal status`);
  return statusEventOf({ status, status_changed_at: 0 } as ResponseState);
}

/**
 * The status event of a row being inserted by the statement that journals it:
 * a fresh row's entry keeps only the status (nothing ran, nothing changed since
 * it was created), so nothing of the row is needed yet.
 */
export function freshStatusEvent(status: ResponseState['status']): KernelEvent {
  if (status !== 'queued' && status !== 'in_progress') throw new RangeError(`a response is not inserted ${status}`);
  return statusEventOf({
    status,
    output: [],
    usage: null,
    usage_by_step: [],
    error: null,
    completed_at: null,
    pending_calls: [],
    created_at: 0,
    status_changed_at: 0,
  } as unknown as ResponseState);
}

function statusEntry(event: Extract<KernelEvent, { type: 'status' }>): Entry | null {
  const state = event.response;
  if (state.status_changed_at === undefined) return null;
  if (isTerminal(state.status)) return { s: event.status, r: 1 };
  const entry: Entry = { s: event.status };
  if (state.output.length > 0) entry.o = state.output;
  if (state.usage !== null) entry.u = state.usage;
  if (state.usage_by_step.length > 0) entry.b = state.usage_by_step;
  if (state.error !== null) entry.e = state.error;
  if (state.completed_at !== null) entry.c = state.completed_at;
  if (state.pending_calls.length > 0) entry.p = state.pending_calls;
  if (state.status_changed_at !== state.created_at) entry.t = state.status_changed_at - state.created_at;
  return entry;
}

const hasKeys = (value: unknown, keys: readonly string[]): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === keys.length && keys.every((k) => k in value);

const emptyArray = (value: unknown): boolean => Array.isArray(value) && value.length === 0;

const isTextPart = (part: unknown, text: string): boolean =>
  hasKeys(part, ['type', 'text', 'annotations']) && part.type === 'output_text' && part.text === text && emptyArray(part.annotations);

/** A message item of the one shape the runner writes (core/runner/step-stream.ts), with `status`; its text part's text, or null. */
function messageItem(item: unknown, status: string): { id: string; text: string | null } | null {
  if (!hasKeys(item, ['id', 'type', 'role', 'status', 'content'])) return null;
  if (typeof item.id !== 'string' || item.type !== 'message' || item.role !== 'assistant' || item.status !== status || !Array.isArray(item.content))
    return null;
  if (item.content.length === 0) return { id: item.id, text: null };
  const [part] = item.content as unknown[];
  if (item.content.length !== 1 || !hasKeys(part, ['type', 'text', 'annotations']) || typeof part.text !== 'string' || !isTextPart(part, part.text))
    return null;
  return { id: item.id, text: part.text };
}

/** The item, place and payload of an event on a message's text part (content index 0), or null. */
function onTextPart(event: KernelEvent, payload: string): { id: string; outputIndex: number; value: unknown } | null {
  if (!hasKeys(event, ['type', 'item_id', 'output_index', 'content_index', payload])) return null;
  const e = event as unknown as Record<string, unknown>;
  if (typeof e.item_id !== 'string' || !Number.isInteger(e.output_index) || e.content_index !== 0) return null;
  return { id: e.item_id, outputIndex: e.output_index as number, value: e[payload] };
}

/** One message item's entry being built: which of its events it holds so far. */
interface MessageRun {
  entry: Entry;
  id: string;
  outputIndex: number;
  deltas: string[];
  /** 'open' takes deltas and a closing; 'added' waits for content.added; 'done'/'part' are a closing half seen. */
  phase: 'added' | 'open' | 'done' | 'part';
  /** Its item.added, kept whole if no content.added follows. */
  added: KernelEvent | null;
  /** The closing events taken so far (text.done, content.done), kept whole if the closing does not complete. */
  closing: KernelEvent[];
  text: string;
}

/** The entries of one append, in order; each one or more of `events`, together all of them. */
export function journalEntries(responseId: string, events: readonly KernelEvent[]): Entry[] {
  const entries: Entry[] = [];
  let run: MessageRun | null = null;

  const startRun = (id: string, outputIndex: number, phase: MessageRun['phase']): MessageRun => {
    const entry: Entry = { m: outputIndex };
    if (id !== outputItemId('msg', responseId, outputIndex)) entry.i = id;
    entries.push(entry);
    return { entry, id, outputIndex, deltas: [], phase, added: null, closing: [], text: '' };
  };
  /** Ends the run: deltas into its entry, an opening or closing that did not complete kept whole. */
  const endRun = () => {
    const ended: MessageRun | null = run;
    run = null;
    if (!ended) return;
    const at = entries.indexOf(ended.entry);
    if (ended.phase === 'added') {
      entries[at] = { ...ended.added! };
      return;
    }
    if (ended.deltas.length > 0) ended.entry.d = ended.deltas;
    if (!('a' in ended.entry) && ended.deltas.length === 0 && !('z' in ended.entry)) entries.splice(at, 1);
    for (const event of ended.closing) entries.push({ ...event });
  };
  const close = (current: MessageRun, z: 'c' | 'i', text: string) => {
    current.entry.z = z;
    if (text !== current.deltas.join('')) current.entry.t = text;
    current.closing = [];
    endRun();
  };

  for (const event of events) {
    const current: MessageRun | null = run;
    const same = (id: string, outputIndex: number) => current !== null && current.id === id && current.outputIndex === outputIndex;
    switch (event.type) {
      case 'item.added': {
        const item = messageItem(event.item, 'in_progress');
        if (item && item.text === null && Number.isInteger(event.output_index)) {
          endRun();
          run = startRun(item.id, event.output_index, 'added');
          run.entry.a = 1;
          run.added = event;
          continue;
        }
        break;
      }
      case 'content.added': {
        const at = onTextPart(event, 'part');
        if (at && current?.phase === 'added' && same(at.id, at.outputIndex) && isTextPart(at.value, '')) {
          current.phase = 'open';
          continue;
        }
        break;
      }
      case 'text.delta': {
        const at = onTextPart(event, 'delta');
        if (at && typeof at.value === 'string') {
          if (current?.phase === 'open' && same(at.id, at.outputIndex)) current.deltas.push(at.value);
          else {
            endRun();
            run = startRun(at.id, at.outputIndex, 'open');
            run.deltas.push(at.value);
          }
          continue;
        }
        break;
      }
      case 'text.done': {
        const at = onTextPart(event, 'text');
        if (at && typeof at.value === 'string' && !(current && current.phase !== 'open')) {
          const open = current && same(at.id, at.outputIndex) ? current : (endRun(), (run = startRun(at.id, at.outputIndex, 'open')));
          open.phase = 'done';
          open.text = at.value;
          open.closing.push(event);
          continue;
        }
        break;
      }
      case 'content.done': {
        const at = onTextPart(event, 'part');
        if (at && current?.phase === 'done' && same(at.id, at.outputIndex) && isTextPart(at.value, current.text)) {
          current.phase = 'part';
          current.closing.push(event);
          continue;
        }
        break;
      }
      case 'item.done': {
        const completed = messageItem(event.item, 'completed');
        if (completed && current?.phase === 'part' && same(completed.id, event.output_index) && completed.text === current.text) {
          close(current, 'c', current.text);
          continue;
        }
        const incomplete = messageItem(event.item, 'incomplete');
        if (incomplete && incomplete.text !== null && Number.isInteger(event.output_index) && !(current && current.phase !== 'open')) {
          const open = current && same(incomplete.id, event.output_index) ? current : (endRun(), (run = startRun(incomplete.id, event.output_index, 'open')));
          close(open, 'i', incomplete.text);
          continue;
        }
        break;
      }
      case 'status': {
        const entry = fromResponseRow.has(event) ? statusEntry(event) : null;
        if (entry) {
          endRun();
          entries.push(entry);
          continue;
        }
        break;
      }
    }
    endRun();
    entries.push({ ...event });
  }
  endRun();
  return entries;
}

/** A journal row as read (migration 0033). */
export interface JournalRow {
  first_sequence: number | null;
  last_sequence: number;
  type: string | null;
  data: unknown;
  /** The response row as it now is, when the journal row holds a status entry (RESPONSE_OF_ROW selects it). */
  response: ResponseRow | null;
}

/**
 * The select-list term a journal read over `j` adds: the response row as it now
 * is, only for rows holding a status entry, whose response it rebuilds (with
 * responseState, as the status writer built it).
 */
export const RESPONSE_OF_ROW = `CASE WHEN jsonb_typeof(j.data) = 'array' AND j.data @? '$[*].s'
  THEN (SELECT jsonb_build_object('id', r.id, 'status', r.status, 'agent_id', r.agent_id, 'agent_name', a.name, 'agent_revision', rev.revision,
          'agent_revision_id', r.agent_revision_id, 'session_id', r.session_id, 'previous_response_id', r.previous_response_id,
          'instructions', r.instructions, 'background', r.background, 'metadata', r.metadata, 'options', r.options, 'output', r.output,
          'usage', r.usage, 'step_usage', r.step_usage, 'error', r.error, 'created_at', r.created_at, 'completed_at', r.completed_at,
          'status_changed_at', r.status_changed_at)
          FROM responses r JOIN agents a ON a.id = r.agent_id JOIN agent_revisions rev ON rev.id = r.agent_revision_id
         WHERE r.id = j.response_id) END AS response`;

/** The status event of an entry: its response from the row's state, with what the entry kept. */
function statusOf(entry: Entry, row: ResponseRow | null): KernelEvent {
  const status = entry.s as ResponseState['status'];
  if (!row) throw new Error('a status entry was read without its response');
  // Its own status, so a terminal one lists no pending calls, as when it was written.
  const state = responseState({ ...row, status, pending_calls: null });
  if (entry.r === 1) return { type: 'status', status, response: { ...state, status } };
  const response: ResponseState = {
    ...state,
    status,
    output: (entry.o as ResponseState['output']) ?? [],
    usage: (entry.u as ResponseState['usage']) ?? null,
    usage_by_step: (entry.b as ResponseState['usage_by_step']) ?? [],
    error: (entry.e as ResponseState['error']) ?? null,
    pending_calls: (entry.p as ResponseState['pending_calls']) ?? [],
    completed_at: (entry.c as number) ?? null,
    status_changed_at: state.created_at + ((entry.t as number) ?? 0),
  };
  return { type: 'status', status, response };
}

/** The events of a message entry, in order. */
function messageEvents(responseId: string, entry: Entry): KernelEvent[] {
  const outputIndex = entry.m as number;
  const id = (entry.i as string | undefined) ?? outputItemId('msg', responseId, outputIndex);
  const deltas = (entry.d as string[] | undefined) ?? [];
  const text = (entry.t as string | undefined) ?? deltas.join('');
  const at = { item_id: id, output_index: outputIndex, content_index: 0 };
  const part = () => ({ type: 'output_text' as const, text, annotations: [] });
  const item = (status: 'in_progress' | 'completed' | 'incomplete') => ({
    id,
    type: 'message' as const,
    role: 'assistant' as const,
    status,
    content: status === 'in_progress' ? [] : [part()],
  });
  const events: KernelEvent[] = [];
  if (entry.a === 1) {
    events.push({ type: 'item.added', output_index: outputIndex, item: item('in_progress') });
    events.push({ type: 'content.added', ...at, part: { type: 'output_text', text: '', annotations: [] } });
  }
  for (const delta of deltas) events.push({ type: 'text.delta', ...at, delta });
  if (entry.z === 'c') {
    events.push({ type: 'text.done', ...at, text });
    events.push({ type: 'content.done', ...at, part: part() });
    events.push({ type: 'item.done', output_index: outputIndex, item: item('completed') });
  } else if (entry.z === 'i') events.push({ type: 'item.done', output_index: outputIndex, item: item('incomplete') });
  return events;
}

/** The events a journal row holds, with their sequences; the SQL decoder, palai_journal_events, gives the same. */
export function rowEvents(responseId: string, row: JournalRow): JournalEntry[] {
  if (!Array.isArray(row.data)) return [{ sequence: row.last_sequence, event: { type: row.type, ...(row.data as object) } as KernelEvent }];
  let sequence = row.first_sequence ?? row.last_sequence;
  const out: JournalEntry[] = [];
  for (const entry of row.data as Entry[]) {
    const events =
      'type' in entry
        ? [entry as unknown as KernelEvent]
        : 's' in entry
          ? [statusOf(entry, row.response)]
          : 'm' in entry
            ? messageEvents(responseId, entry)
            : [];
    for (const event of events) out.push({ sequence: sequence++, event });
  }
  return out;
}
