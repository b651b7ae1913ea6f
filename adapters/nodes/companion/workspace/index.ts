// File operations of the companion node over the operator's file profiles:
// read, literal search, whole-file write and all-or-nothing patch. Each takes
// paths relative to the profile and throws WorkspaceDenied (COMMAND_DENIED)
// or WorkspaceFailed (EXECUTION_FAILED) with messages that hold no path of
// the node.
export * from './profile.js';
export { checkRelative, MAX_PATH_BYTES, resolveTarget, type Access, type Target } from './paths.js';
export { MAX_GLOB_CHARS } from './glob.js';
export * from './read.js';
export * from './search.js';
export * from './write.js';
export * from './patch.js';
