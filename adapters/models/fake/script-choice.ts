// The fake model's script choices: a step picked by what the call sees — the
// response's metadata (where a surface keeps its own ids, such as the A2A
// messageId), the latest input, whether it is the first call — so one agent
// can play several scripted scenarios. The first matching choice wins; with
// none, the script (or the echo) plays as before.
import type { FakeScriptChoice, FakeStep, Item } from '../../../generated/schemas.js';
import type { ModelRequest } from '../../../core/models/model-port.js';

/** The latest input of the conversation: the last user message, or the last tool output (an answer to a question). */
export function latestInput(items: Item[]): string {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item.type === 'function_call_output') return item.output;
    if (item.type === 'message' && item.role === 'user') return item.content.map((p) => p.text).join('');
  }
  return '';
}

function matches(choice: FakeScriptChoice, request: ModelRequest): boolean {
  const { first_call: firstCall, metadata_prefix: metadataPrefix, input_prefix: inputPrefix } = choice.when;
  if (firstCall !== undefined && firstCall !== (request.stepIndex === 0)) return false;
  for (const [key, prefix] of Object.entries(metadataPrefix ?? {})) {
    if (!(request.metadata?.[key] ?? '').startsWith(prefix)) return false;
  }
  return inputPrefix === undefined || latestInput(request.items).startsWith(inputPrefix);
}

/** The step the first matching choice names, or undefined. */
export function chosenStep(request: ModelRequest): FakeStep | undefined {
  return request.model.script_choices?.find((choice) => matches(choice, request))?.step;
}
