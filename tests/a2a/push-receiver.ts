// A local receiver of A2A push notifications for tests: it records every POST
// (status answered, headers, JSON body) and fails the first ones on request.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Notification {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface Receiver {
  url: string;
  seen: Notification[];
  /** Answers 200 from now on. */
  succeed(): void;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 that answers 500 to its first `failures` requests, then 200. */
export async function startReceiver(failures: number): Promise<Receiver> {
  const seen: Notification[] = [];
  let failing = failures;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = seen.filter((n) => n.status === 500).length < failing ? 500 : 200;
      seen.push({ status, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    succeed: () => void (failing = 0),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The state a delivered notification announces: a task's, or a status update's. */
export const announcedState = (n: Notification): string | undefined => n.body?.task?.status?.state ?? n.body?.statusUpdate?.status?.state;

export async function until<T>(what: string, probe: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`${what} did not happen within ${ms} ms`);
    await sleep(50);
  }
}
