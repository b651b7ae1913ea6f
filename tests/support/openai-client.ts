// The official OpenAI SDK pointed at a test hub listening on a real port.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before } from 'node:test';
import OpenAI from 'openai';
import type { TestHub } from './hub.js';

/** Listens for the suite and returns the client (valid inside tests); closes the server after the suite. */
export function openAiClientFor(ctx: () => TestHub): () => OpenAI {
  let server: Server;
  let client: OpenAI;
  before(async () => {
    server = ctx().hub.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    client = new OpenAI({ apiKey: ctx().apiKey, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return () => client;
}
