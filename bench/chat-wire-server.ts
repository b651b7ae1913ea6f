// A minimal OpenAI-compatible Chat Completions server for benchmarks: streams N
// one-word chunks as fast as the socket takes them and notes when the first
// byte of each answer left, so overhead is measured from the provider's first byte.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatWire {
  baseUrl: string;
  /** performance.now() at which the last answer's first body byte was written. */
  firstByteAt(): number;
  close(): Promise<void>;
}

const chunk = (delta: Record<string, unknown>, finish: string | null, usage?: object) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'bench', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;

export async function startChatWire(tokens: number): Promise<ChatWire> {
  let firstByte = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      firstByte = performance.now();
      res.write(chunk({ role: 'assistant', content: 'w0' }, null));
      for (let i = 1; i < tokens; i++) res.write(chunk({ content: ` w${i}` }, null));
      res.write(chunk({}, 'stop', { prompt_tokens: 5, completion_tokens: tokens, total_tokens: tokens + 5 }));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    firstByteAt: () => firstByte,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
