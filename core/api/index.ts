// What a surface imports from the kernel: the API, and the pure helpers that
// read the kernel's own vocabulary (statuses, events, the text of an output).
export type * from './kernel-api.js';
export { createKernelApi } from './create-kernel-api.js';
export { isTerminalEvent, isWaitingEvent } from '../journal/journal-port.js';
export { FEED_START } from '../journal/project-feed.js';
export { firstUnstorable, storableText } from '../json.js';
export { inspectJson, MAX_JSON_DEPTH, unstorableText } from '../json-guard.js';
export { outputText } from '../responses/items.js';
export { compileSchema, type CompiledSchema, type SchemaDraft } from '../schemas/json-schema-drafts.js';
export {
  isParked,
  isSettled,
  isSuspended,
  isTerminal,
  isWaiting,
  PARKED_STATUS,
  SETTLED_STATUSES,
  SUSPENDED_STATUSES,
  TERMINAL_STATUSES,
  WAITING_STATUSES,
  type ResponseStatus,
  type SuspendedStatus,
  type TerminalStatus,
  type WaitingStatus,
} from '../response-status.js';
export { lazyOnce, type LazyOnce } from '../lazy.js';
export * from './surface.js';
export { declareInboxSource } from '../idempotency/inbox-sources.js';
