// A real HTTP receiver on 127.0.0.1 for webhook tests: it records every request
// (headers, raw body, arrival time) and answers as the test scripts it, by the
// request's number: a status with headers, after a delay, or never (a hang).
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Answer after this long. */
  delayMs?: number;
  /** Never answer (until the receiver closes). */
  hang?: boolean;
}

/** How the receiver answers its n-th request (0-based); default 204. */
export type Script = (n: number, request: ReceivedWebhook) => Answer;

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Requests being answered right now, and the most at once so far. */
  inFlight: number;
  maxInFlight: number;
  script: Script;
  /** Resolves when `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startReceiver(script: Script = () => ({ status: 204 }), port = 0): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    inFlight: 0,
    maxInFlight: 0,
    script,
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${receiver.received.length} of ${count} requests in ${timeoutMs} ms`);
        await sleep(10);
      }
      return receiver.received.slice(0, count);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const request: ReceivedWebhook = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const n = receiver.received.length;
      receiver.received.push(request);
      receiver.inFlight++;
      receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight);
      res.on('close', () => receiver.inFlight--);
      const answer = receiver.script(n, request);
      if (answer.hang) return void hanging.add(res);
      if (answer.delayMs) await sleep(answer.delayMs);
      res.writeHead(answer.status, answer.headers ?? {});
      res.end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/** A port nothing listens on (it was free a moment ago). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Verifies a received webhook with the standardwebhooks package, as a receiver would; returns the parsed body. */
export function verified(secret: string, request: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
}
