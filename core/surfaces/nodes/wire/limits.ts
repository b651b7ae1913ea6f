// The bounds of the node protocol, in one place for the hub and the companion
// (docs/nodes.md lists them).

/** The protocol versions this build speaks. */
export const MIN_PROTOCOL = 1;
export const MAX_PROTOCOL = 1;

/** A frame, in bytes (the WebSocket's maxPayload; larger closes with 1009). */
export const MAX_FRAME_BYTES = 1_048_576;
/** A challenge's life: no valid hello within it closes the socket (4408). */
export const CHALLENGE_TTL_MS = 30_000;
/** Open challenges per hub process; beyond, a new connection is refused (4429). */
export const MAX_OPEN_CHALLENGES = 1024;
/** Nodes waiting for approval per project; beyond, a new identity is refused (4429). */
export const MAX_PENDING_PAIRINGS = 128;

export const MAX_CATALOG_COMMANDS = 128;
export const MAX_CATALOG_BYTES = 512 * 1024;
export const MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_COMMAND_NAME = 128;
export const MAX_ALIAS = 64;

/** An execution plan's life before it is sent: an offline node past it gets NODE_UNAVAILABLE. */
export const MAX_PLAN_TTL_MS = 5 * 60_000;
/** The clock difference a node tolerates when it checks a plan's expiry. */
export const CLOCK_SKEW_MS = 30_000;

export const MAX_INPUT_BYTES = 512 * 1024;
export const MAX_SCRIPT_BYTES = 64 * 1024;
export const MAX_ENV_BYTES = 8 * 1024;
export const MAX_TIMEOUT_SECONDS = 3600;
export const MAX_OUTPUT_BYTES = 512 * 1024;
/** Open (not yet ended) invocations per node; beyond, a call ends NODE_BUSY. */
export const MAX_OPEN_INVOCATIONS = 256;
/** A failure message crossing the boundary, in characters. */
export const MAX_FAILURE_MESSAGE = 512;

/** The heartbeat both sides send; a connection silent for three of them is gone. */
export const HEARTBEAT_MS = 10_000;
