import { PalaiError } from '../../errors/palai-error.js';
import { ToolError, type BuiltinTool } from '../tool-port.js';

const TIMEOUT_MS = 30_000;
const MAX_RESULT_CHARS = 20_000;

/** Where a call went, for messages: without credentials, query or fragment. */
function shown(url: string): string {
  try {
    const { origin, pathname } = new URL(url);
    return `${origin}${pathname}`;
  } catch {
    return JSON.stringify(url.slice(0, 200));
  }
}

/**
 * POSTs JSON to a URL with an `Idempotency-Key` header equal to the call's key,
 * so a receiver that deduplicates sees one effect even if Palai retries the
 * call after a crash. The call goes through the kernel's egress guard: a refused
 * destination is a result the model reads, and a redirect is returned as it is.
 */
export const httpPost: BuiltinTool = {
  name: 'http_post',
  description: 'Send a JSON body to a URL with HTTP POST and return the status and response body.',
  parameters: {
    type: 'object',
    properties: { url: { type: 'string', minLength: 1, maxLength: 2000 }, body: {} },
    required: ['url'],
    additionalProperties: false,
  },
  risk: 'write',
  // The URL's host (with its port when it names one), as a channel grant names it.
  target(args: { url?: unknown }) {
    if (typeof args?.url !== 'string') return null;
    try {
      return { type: 'channel', locator: new URL(args.url).host.toLowerCase() };
    } catch {
      return { type: 'channel', locator: '' };
    }
  },
  async run(args: { url: string; body?: unknown }, context, deps) {
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(TIMEOUT_MS)]);
    try {
      const res = await deps.egress(args.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': context.idempotencyKey },
        body: JSON.stringify(args.body ?? null),
        signal,
      });
      const text = (await res.text()).slice(0, MAX_RESULT_CHARS);
      return { kind: 'output', output: JSON.stringify({ status: res.status, body: text }) };
    } catch (error) {
      context.signal.throwIfAborted();
      if (error instanceof PalaiError) throw new ToolError(error.message);
      throw new ToolError(`POST ${shown(args.url)} failed: ${causeOf(error)}`);
    }
  },
};

/** "fetch failed" says nothing; the innermost cause ("getaddrinfo ENOTFOUND host") does. */
function causeOf(error: unknown): string {
  let message = String(error);
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) message = current.message;
  return message;
}
