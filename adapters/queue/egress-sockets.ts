// The egress guard for the broker clients, which open their own sockets: the
// AWS SDK through Node's HTTP agents, kafkajs through a socket factory. Every
// connection asks the guard first, so a consumer or a job's reply_to cannot
// point Palai at an address the operator did not allow (the SDK may send to a
// reply queue URL's own host).
import { Agent as HttpAgent, type AgentOptions } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { SocketEgress } from '../../core/egress/egress-port.js';

type CreateConnection = (options: Record<string, unknown>, callback: (error: Error | null, socket?: Duplex) => void) => Duplex | undefined;

/** Wraps an agent's createConnection so each connection gets the guard's options, or fails with its refusal. */
function guard<A extends HttpAgent>(agent: A, egress: SocketEgress): A {
  const original = (agent as unknown as { createConnection: CreateConnection }).createConnection.bind(agent);
  (agent as unknown as { createConnection: CreateConnection }).createConnection = (options, callback) => {
    let extra;
    try {
      extra = egress.connectOptions(String(options.host ?? options.hostname ?? ''));
    } catch (error) {
      callback(error as Error);
      return undefined;
    }
    return original({ ...options, ...extra }, callback);
  };
  return agent;
}

/** HTTP and HTTPS agents whose every connection passes the egress guard. */
export function guardedAgents(egress: SocketEgress, options: AgentOptions = { keepAlive: true, maxSockets: 50 }) {
  return { httpAgent: guard(new HttpAgent(options), egress), httpsAgent: guard(new HttpsAgent(options), egress) };
}

/** A kafkajs socketFactory that asks the guard before each broker connection. */
export function guardedSocketFactory(egress: SocketEgress) {
  return ({
    host,
    port,
    ssl,
    onConnect,
  }: {
    host: string;
    port: number;
    ssl: tls.ConnectionOptions | boolean | null | undefined;
    onConnect: () => void;
  }): Socket => {
    let extra;
    try {
      extra = egress.connectOptions(host);
    } catch (error) {
      const socket = new net.Socket();
      process.nextTick(() => socket.destroy(error as Error));
      return socket;
    }
    // SNI takes a name only: an IP broker gets none.
    if (ssl) return tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...(typeof ssl === 'object' ? ssl : {}), ...extra }, onConnect);
    return net.connect({ host, port, ...extra }, onConnect);
  };
}
