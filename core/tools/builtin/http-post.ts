import { assertEgressAllowed } from '../../egress.js';
import { ToolError } from '../tool-port.js';
import type { BuiltinTool } from './registry.js';

const TIMEOUT_MS = 30_000;
const MAX_RESULT_CHARS = 20_000;

/**
 * POSTs JSON to a URL with an `Idempotency-Key` header equal to the call's key,
 * so a receiver that deduplicates sees one effect even if Palai retries the
 * call after a crash.
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
  async run(args: { url: string; body?: unknown }, context, deps) {
    const url = await assertEgressAllowed(args.url, deps.egressAllowHosts).catch((error: Error) => {
      throw new ToolError(error.message);
    });
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(TIMEOUT_MS)]);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': context.idempotencyKey },
        body: JSON.stringify(args.body ?? null),
        signal,
        redirect: 'manual',
      });
    } catch (error) {
      context.signal.throwIfAborted();
      throw new ToolError(`POST ${url.origin}${url.pathname} failed: ${(error as Error).message}`);
    }
    const text = (await res.text()).slice(0, MAX_RESULT_CHARS);
    return { kind: 'output', output: JSON.stringify({ status: res.status, body: text }) };
  },
};
