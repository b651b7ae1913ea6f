// The WebSocket close codes the hub ends a node's connection with. A permanent
// refusal makes the companion exit non-zero instead of reconnecting; the others
// are retried with backoff. docs/nodes.md documents each.

export const NODE_CLOSE = {
  /** A frame that is not JSON or not a frame of the protocol. */
  invalidFrame: 4400,
  /** The proof does not hold: signature, id not derived from the key, catalog hash, another nonce. */
  invalidProof: 4401,
  /** The node was denied or revoked. */
  revoked: 4403,
  /** No valid hello within the challenge's 30 s, or a hello after it expired. */
  challengeExpired: 4408,
  /** No protocol version in common. */
  incompatibleProtocol: 4409,
  /** Another connection of the same node took over. */
  superseded: 4410,
  /** An unknown identity without a usable enrollment token (unknown, expired, revoked or used up). */
  enrollmentRefused: 4412,
  /** The catalog is over a limit (commands, bytes, a schema, a name). */
  catalogTooLarge: 4413,
  /** Too many open challenges on this process, or pending pairings in the project. */
  busy: 4429,
  /** The hub process is shutting down, or lost its hold on the node's connection. */
  goingAway: 1001,
  /** The hub could not record a frame (its store failed): reconnect, and the re-send recovers it. */
  hubError: 1011,
  /** The node's catalog changed on a live connection: reconnect and present it in a new hello. */
  reconnect: 1012,
  /** A frame over 1 MiB (the WebSocket library's own code). */
  tooLarge: 1009,
} as const;

export type NodeCloseCode = (typeof NODE_CLOSE)[keyof typeof NODE_CLOSE];

/** Codes after which reconnecting cannot help until a person changes something. */
export const PERMANENT_CLOSE_CODES: ReadonlySet<number> = new Set([
  NODE_CLOSE.invalidFrame,
  NODE_CLOSE.invalidProof,
  NODE_CLOSE.revoked,
  NODE_CLOSE.incompatibleProtocol,
  NODE_CLOSE.enrollmentRefused,
  NODE_CLOSE.catalogTooLarge,
  NODE_CLOSE.tooLarge,
]);
