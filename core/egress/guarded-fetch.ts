// The guarded fetch: undici's own fetch over one Agent whose connector is the
// egress check, so connections are pooled per origin and each new one is
// checked. Node's global fetch is not used: it runs its own bundled undici, and
// a dispatcher from this package is not guaranteed to work with it. undici is
// loaded at the first call, not at start: a hub that never calls out never pays it.
import type { Agent, RequestInit as UndiciRequestInit } from 'undici';
import { PalaiError } from '../errors/palai-error.js';
import { egressRefusalIn, type EgressFetch, type EgressOptions } from './egress-port.js';
import { guardedConnector, systemResolver } from './guarded-connector.js';

/** A URL and init from fetch's arguments; a Request's own fields are the defaults of `init`. */
function unpack(input: string | URL | Request, init: RequestInit = {}): { url: string; init: RequestInit } {
  if (typeof input === 'string') return { url: input, init };
  if (input instanceof URL) return { url: input.href, init };
  const fromRequest: RequestInit & { duplex?: 'half' } = { method: input.method, headers: input.headers, signal: input.signal };
  if (input.body) Object.assign(fromRequest, { body: input.body, duplex: 'half' });
  return { url: input.url, init: { ...fromRequest, ...init } };
}

function httpUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PalaiError('invalid-request', `Not a URL: ${JSON.stringify(url.slice(0, 200))}.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new PalaiError('egress-denied', `Outbound calls may use http and https only, not ${parsed.protocol}.`);
  }
  return parsed;
}

/** One guarded fetch with its own connection pool; a hub builds one and closes it when it stops. */
export function createEgressFetch(options: EgressOptions): EgressFetch {
  // The allow list is checked now (a wrong entry stops the start); undici and the pool come with the first call.
  const connector = guardedConnector(options.allowHosts, options.resolve ?? systemResolver);
  let client: Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> | null = null;
  let closed = false;
  const load = () =>
    (client ??= import('undici').then(
      (undici) => {
        const agent = new undici.Agent({ connect: connector(undici.buildConnector) });
        // Closed before its first call: it fails as a closed pool does.
        if (closed) agent.close().catch(() => undefined);
        return { agent, fetch: undici.fetch };
      },
      (error: unknown) => {
        client = null;
        throw error;
      },
    ));
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const call = unpack(input, init);
    const url = httpUrl(call.url);
    const { agent, fetch: undiciFetch } = await load();
    try {
      // A redirect is a second destination, chosen by the server answering: it is returned, not followed.
      const response = await undiciFetch(url, { ...call.init, redirect: 'manual', dispatcher: agent } as UndiciRequestInit);
      return response as unknown as Response;
    } catch (error) {
      throw egressRefusalIn(error) ?? error;
    }
  };
  const close = async (): Promise<void> => {
    closed = true;
    if (client) await (await client).agent.close();
  };
  return Object.assign(guarded, { close });
}
