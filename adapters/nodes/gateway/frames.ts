// The frames as the gateway reads and writes them: a text frame of JSON that
// is one of the companion's frames (validated by the protocol's generated
// validators, chosen by its `type`), or a refusal with its close code. A hello
// over a catalog limit the schema itself bounds (commands, a name's length) is
// a catalog refusal (4413) rather than an invalid frame.
import type { RawData, WebSocket } from 'ws';
import type { NodeCompanionFrame, NodeHubFrame } from '../../../generated/protocol-schemas.js';
import { lazyOnce } from '../../../core/api/index.js';
import { NODE_CLOSE } from '../../../core/surfaces/nodes/wire/close-codes.js';
import type { Refusal } from './hello.js';

type CompanionType = NodeCompanionFrame['type'];

const validators = lazyOnce(async () => {
  const v = await import('../../../generated/protocol-validators.js');
  return {
    hello: v.NodeHelloFrame,
    heartbeat: v.NodeHeartbeatFrame,
    'invoke.accepted': v.NodeInvokeAcceptedFrame,
    'invoke.result': v.NodeInvokeResultFrame,
    catalog: v.NodeCatalogFrame,
  } satisfies Record<CompanionType, unknown>;
});

/** Loads the validators ahead of the first frame. */
export const loadFrameValidators = async (): Promise<void> => void (await validators());

const CATALOG_BOUNDS = new Set(['maxItems', 'maxLength', 'maxProperties']);

const textOf = (data: RawData): string =>
  Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');

const invalid = (reason: string): Refusal => ({ code: NODE_CLOSE.invalidFrame, reason });

export async function readFrame(data: RawData, isBinary: boolean): Promise<{ frame: NodeCompanionFrame } | { refusal: Refusal }> {
  if (isBinary) return { refusal: invalid('frames are JSON text') };
  let value: unknown;
  try {
    value = JSON.parse(textOf(data));
  } catch {
    return { refusal: invalid('the frame is not JSON') };
  }
  const type = (value as { type?: unknown } | null)?.type;
  const table = await validators();
  if (typeof type !== 'string' || !Object.hasOwn(table, type)) return { refusal: invalid('not a frame of the node protocol') };
  const validate = table[type as CompanionType];
  if (validate(value)) return { frame: value as NodeCompanionFrame };
  const errors = validate.errors ?? [];
  if (type === 'hello' && errors.some((e) => e.instancePath.startsWith('/proof/catalog') && CATALOG_BOUNDS.has(e.keyword)))
    return { refusal: { code: NODE_CLOSE.catalogTooLarge, reason: 'the catalog is over a limit' } };
  const first = errors[0];
  return { refusal: invalid(`an invalid ${type} frame${first ? ` (${first.instancePath || '/'} ${first.message ?? ''})` : ''}`) };
}

/** Sends a frame if the socket is open; false when it is not. */
export function sendFrame(ws: WebSocket, frame: NodeHubFrame): boolean {
  if (ws.readyState !== ws.OPEN) return false;
  ws.send(JSON.stringify(frame));
  return true;
}

/** A close reason fits in 123 bytes of UTF-8 (the WebSocket's limit). */
export function closeReason(reason: string): string {
  const chars = [...reason];
  while (Buffer.byteLength(chars.join(''), 'utf8') > 123) chars.pop();
  return chars.join('');
}

/** Closes with the code and a bounded reason (once; later calls do nothing). */
export function closeWith(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === ws.CLOSING || ws.readyState === ws.CLOSED) return;
  ws.close(code, closeReason(reason));
}
