// What a request that answers a waiting response is answered with: that turn. OpenAI makes a new response
// for each request, whose `output` holds only what the model did after the input; Palai resumes the same
// response, whose `output` keeps growing. A client that resends its history (the Agents SDK, the AI SDK)
// or chains it (previous_response_id) adds every output item it is given to its history, so an answer
// holding the earlier calls again reads as new calls to run. So the answer's `output` starts where the
// response stood when answered, and leaves out the caller's own answers (its tool outputs, its answers to
// questions): to OpenAI those are input. GET /v1/responses/{id} still shows the whole response.
import type { JournalEntry, ResponseState } from '../../core/api/index.js';

export interface Turn {
  /** How many output items the response had when it was answered. */
  from: number;
  /** The calls the caller answered with outputs of its own (client tools, questions). */
  answered: ReadonlySet<string>;
}

/** The turn a request answering `waiting` starts. */
export function turnOf(waiting: ResponseState): Turn {
  const answered = waiting.pending_calls.filter((call) => call.waiting_for !== 'approval').map((call) => call.call_id);
  return { from: waiting.output.length, answered: new Set(answered) };
}

const isAnswer = (turn: Turn, item: ResponseState['output'][number]): boolean => item.type === 'function_call_output' && turn.answered.has(item.call_id);

/**
 * The response as this turn shows it. A call Palai ran in an earlier turn whose output came in this one (an
 * approval given now) comes with its output, so the REST API shows it as one mcp_call (ran-calls.ts).
 */
export function turnView(state: ResponseState, turn: Turn): ResponseState {
  const earlier = state.output.slice(0, turn.from);
  const output = state.output.slice(turn.from).flatMap((item) => {
    if (isAnswer(turn, item)) return [];
    const call = item.type === 'function_call_output' ? earlier.find((c) => c.type === 'function_call' && c.call_id === item.call_id && c.server) : undefined;
    return call ? [call, item] : [item];
  });
  return { ...state, output };
}

/** A journal entry as this turn's stream shows it, or null for one about the caller's own answer. */
export function turnEntry(entry: JournalEntry, turn: Turn): JournalEntry | null {
  const { event } = entry;
  if (event.type === 'status') return { ...entry, event: { ...event, response: turnView(event.response, turn) } };
  if ((event.type === 'item.added' || event.type === 'item.done' || event.type === 'item.updated') && isAnswer(turn, event.item)) return null;
  return entry;
}
