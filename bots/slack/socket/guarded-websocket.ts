// The Socket Mode WebSocket's way out, through the egress guard. The host comes
// from Slack's apps.connections.open answer (or from whatever server a bot's
// api_url names), so it is checked like any other destination: each connection
// asks the guard, and a host name is resolved and checked inside the socket's
// own lookup, as the guarded fetch does. The sockets are kept so that closing
// can end a peer that never completes the WebSocket close handshake.
import type { LookupFunction, Socket } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { egressRefusalIn, type SocketEgress } from '../../../core/egress/egress-port.js';
import type { PalaiError } from '../../../core/errors/palai-error.js';

export interface GuardedWebSocketDispatcher {
  /** The undici dispatcher to give the WebSocket. */
  agent: Agent;
  /** The guard's refusal of the last connection it refused, if any. */
  readonly refusal: PalaiError | null;
  /** Ends every socket it opened and the dispatcher itself. */
  destroy(): Promise<void>;
}

export function guardedWebSocketDispatcher(egress: SocketEgress): GuardedWebSocketDispatcher {
  const sockets = new Set<Socket>();
  // The guard hands out one checking lookup (or none, for an allow-listed host): one connector each.
  const connectors = new Map<LookupFunction | undefined, buildConnector.connector>();
  // HTTP/1.1 only: a WebSocket upgrade needs a connection of its own.
  const connectorFor = (lookup: LookupFunction | undefined) => {
    let connector = connectors.get(lookup);
    if (!connector) connectors.set(lookup, (connector = buildConnector({ allowH2: false, ...(lookup ? { lookup } : {}) })));
    return connector;
  };
  let refusal: PalaiError | null = null;
  const agent = new Agent({
    connect: (options, callback) => {
      let lookup: LookupFunction | undefined;
      try {
        lookup = egress.connectOptions(options.hostname).lookup;
      } catch (error) {
        refusal = egressRefusalIn(error);
        callback(error as Error, null);
        return;
      }
      connectorFor(lookup)(options, (error, socket) => {
        if (error || !socket) {
          refusal = egressRefusalIn(error) ?? refusal;
          callback(error ?? new Error('no socket'), null);
          return;
        }
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        callback(null, socket);
      });
    },
  });
  return {
    agent,
    get refusal() {
      return refusal;
    },
    async destroy() {
      for (const socket of sockets) socket.destroy();
      await agent.destroy().catch(() => undefined);
    },
  };
}
