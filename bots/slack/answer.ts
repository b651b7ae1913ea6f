// What a response's journal says to post in its thread, as an ordered list of
// segments: runs of answer text (each one Slack message, split within Slack's
// limits), approval requests and short notices (a question, a failure). It is a
// pure function of the journal, so a streamer that restarts rebuilds exactly
// the segments it was posting and continues where its saved progress says.
// Text of a model call that broke off (its item closed `incomplete`) is left out:
// the retried call streams the answer again.
import { isSettled, isTerminal, type JournalEntry, type ResponseState } from '../../core/api/index.js';

type PendingCall = ResponseState['pending_calls'][number];

export type Segment = { kind: 'text'; text: string; complete: boolean } | { kind: 'approval'; call: PendingCall } | { kind: 'notice'; text: string };

export interface Answer {
  segments: Segment[];
  /** The response ended: nothing will be added. */
  done: boolean;
}

/** Slack takes 12,000 characters of markdown_text a call; one message holds at most this much of the answer. */
export const MAX_MESSAGE_TEXT = 10_000;
const MAX_ERROR = 300;

/**
 * Where a long run of text ends its message: at the first line break past 90% of
 * the limit, else the first space past 97%, else the limit. Each is the first of
 * its kind past a fixed point, so the cut never moves as more text arrives, and
 * text already sent always stays inside its message.
 */
export function messageCut(text: string, max = MAX_MESSAGE_TEXT): number | null {
  const after = (char: string, from: number) => {
    const at = text.indexOf(char, from);
    return at === -1 ? Infinity : at + 1;
  };
  const cut = Math.min(after('\n', Math.floor(max * 0.9)), after(' ', Math.floor(max * 0.97)), max);
  // Only once text follows the cut: until then the message may still grow to it.
  return cut < text.length ? cut : null;
}

function splitRun(text: string, complete: boolean): Segment[] {
  const segments: Segment[] = [];
  let rest = text;
  for (let cut = messageCut(rest); cut !== null; cut = messageCut(rest)) {
    segments.push({ kind: 'text', text: rest.slice(0, cut), complete: true });
    rest = rest.slice(cut);
  }
  if (rest || complete) segments.push({ kind: 'text', text: rest, complete });
  return segments;
}

const firstLine = (text: string) => {
  const line = text.split('\n', 1)[0].trim();
  return line.length > MAX_ERROR ? `${line.slice(0, MAX_ERROR - 1)}…` : line;
};

/** The words a status puts in the thread besides the answer. */
function statusSegments(response: ResponseState, answered: boolean): Segment[] {
  switch (response.status) {
    case 'waiting_for_approval':
      return response.pending_calls.filter((c) => c.waiting_for === 'approval').map((call) => ({ kind: 'approval', call }));
    case 'waiting_for_input':
      return response.pending_calls
        .filter((c) => c.waiting_for === 'input')
        .map((c) => ({ kind: 'notice', text: c.question ?? 'The agent is waiting for your answer.' }));
    case 'waiting_for_tool':
      return [{ kind: 'notice', text: "Waiting for the output of a client tool (sent through Palai's API)." }];
    case 'completed':
      return answered ? [] : [{ kind: 'notice', text: '(The agent finished without an answer.)' }];
    case 'failed':
      return [{ kind: 'notice', text: `Sorry, I could not answer: ${firstLine(response.error?.message ?? 'the run failed')}` }];
    case 'canceled':
      return [{ kind: 'notice', text: 'The answer was canceled.' }];
    case 'timed_out':
      return [{ kind: 'notice', text: 'Sorry, the answer took too long and was stopped.' }];
    case 'budget_exceeded':
      return [{ kind: 'notice', text: 'Sorry, the answer ran out of its budget and was stopped.' }];
    case 'queued':
    case 'in_progress':
    case 'parked':
      return [];
    default: {
      const never: never = response.status;
      return never;
    }
  }
}

export function answerOf(entries: readonly JournalEntry[]): Answer {
  const broken = new Set<string>();
  for (const { event } of entries) {
    if (event.type === 'item.done' && (event.item as { status?: string }).status === 'incomplete') broken.add(String((event.item as { id?: string }).id));
  }
  const segments: Segment[] = [];
  let run = '';
  let answered = false;
  let done = false;
  for (const { event } of entries) {
    if (event.type === 'text.delta') {
      if (!broken.has(event.item_id)) run += event.delta;
      continue;
    }
    if (event.type !== 'status' || !isSettled(event.status)) continue;
    if (run) {
      segments.push(...splitRun(run, true));
      answered = true;
      run = '';
    }
    segments.push(...statusSegments(event.response, answered));
    if (isTerminal(event.status)) done = true;
  }
  if (run) segments.push(...splitRun(run, false));
  return { segments, done };
}
