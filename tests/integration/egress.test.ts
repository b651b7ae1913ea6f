// The egress guard against real local receivers: loopback is refused unless
// allow-listed (and the receiver never sees the request), a name is resolved
// once per connection and the connection goes to the address that was checked
// (DNS rebinding fails), and no redirect is followed — not by http_post, not by
// the OpenAI or Anthropic SDKs, each driven through a real run on the hub.
import assert from 'node:assert/strict';
import dc from 'node:diagnostics_channel';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { httpStatusOf } from '../../adapters/http/problem.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { ResolvedAddress, Resolver } from '../../core/egress/egress-port.js';
import { guardedLookup } from '../../core/egress/guarded-connector.js';
import { createEgressFetch } from '../../core/egress/guarded-fetch.js';
import { ranCalls, toolResult, toolResults } from '../support/tool-results.js';

interface Receiver {
  url: string;
  hits: { method: string; path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function startReceiver(
  host: '127.0.0.1' | '::1',
  answer: (req: IncomingMessage, res: ServerResponse) => void = (_, res) => res.end('ok'),
): Promise<Receiver> {
  const hits: Receiver['hits'] = [];
  const server = createServer((req, res) => {
    hits.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    req.resume();
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: host === '::1' ? `http://[::1]:${port}` : `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The receivers a refused or redirected call must never reach, and a redirector (on an allowed host) pointing at one. */
const v4 = await startReceiver('127.0.0.1');
const v6 = await startReceiver('::1');
const redirector = await startReceiver('127.0.0.1', (req, res) => res.writeHead(307, { location: `${v6.url}${req.url}` }).end());
after(() => Promise.all([v4.close(), v6.close(), redirector.close()]));

/** Asserts `error` is the guard's refusal, naming `host`. */
function assertRefused(error: unknown, host: string, why: RegExp): true {
  assert.ok(error instanceof PalaiError, `expected the egress refusal, got ${String(error)}`);
  assert.equal(error.slug, 'egress-denied');
  assert.equal(httpStatusOf(error.slug), 403);
  assert.ok(error.message.includes(`Outbound call to ${host}`), error.message);
  assert.match(error.message, why);
  assert.match(error.message, /PALAI_EGRESS_ALLOW_HOSTS/);
  return true;
}

/** The IPs sockets try to connect to, as Node reports them, from now until stop(). */
function watchConnectionAttempts(onAttempt: () => void = () => undefined) {
  const ips: string[] = [];
  const listener = (message: unknown) => {
    (message as { socket: Socket }).socket.on('connectionAttempt', (ip: string) => {
      ips.push(ip);
      onAttempt();
    });
  };
  dc.subscribe('net.client.socket', listener);
  return { ips, stop: () => dc.unsubscribe('net.client.socket', listener) };
}

/** Globally reachable, so the guard lets it through; the test aborts as soon as the connection is tried. */
const PUBLIC_ADDRESS = '1.1.1.1';

describe('the guarded fetch', () => {
  const denying = createEgressFetch({ allowHosts: [] });
  const allowing = createEgressFetch({ allowHosts: ['127.0.0.1', '::1'] });
  after(() => Promise.all([denying.close(), allowing.close()]));

  test('loopback is refused without the allow list, as an egress-denied problem naming the host; the receiver never sees it', async () => {
    await assert.rejects(denying(`${v4.url}/x`, { method: 'POST', body: '{}' }), (e) =>
      assertRefused(e, '127.0.0.1', /127\.0\.0\.1, loopback \(127\.0\.0\.0\/8\)/),
    );
    await assert.rejects(denying(`${v6.url}/x`), (e) => assertRefused(e, '::1', /::1, loopback \(::1\/128\)/));
    // A name that resolves to loopback is refused as well, naming the name and the address.
    const port = new URL(v4.url).port;
    await assert.rejects(denying(`http://localhost:${port}/x`), (e) => assertRefused(e, 'localhost', /loopback/));
    // Other spellings of loopback that the URL parser turns into it.
    await assert.rejects(denying(`http://0x7f000001:${port}/x`), (e) => assertRefused(e, '127.0.0.1', /loopback/));
    await assert.rejects(denying(`http://[::ffff:7f00:1]:${port}/x`), (e) => assertRefused(e, '::ffff:7f00:1', /loopback \(127\.0\.0\.0\/8\)/));
    assert.deepEqual([v4.hits.length, v6.hits.length], [0, 0]);
  });

  test('an allow-listed host is reached, by the host as the URL writes it', async () => {
    const four = await allowing(`${v4.url}/allowed`, { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    assert.equal(four.status, 200);
    assert.equal(await four.text(), 'ok');
    const six = await allowing(`${v6.url}/allowed`);
    assert.equal(six.status, 200);
    assert.deepEqual([v4.hits.at(-1)?.path, v6.hits.at(-1)?.path], ['/allowed', '/allowed']);
    // Allowing 127.0.0.1 does not allow a name that resolves to it.
    const port = new URL(v4.url).port;
    await assert.rejects(allowing(`http://localhost:${port}/x`), (e) => assertRefused(e, 'localhost', /loopback/));
    v4.hits.length = 0;
    v6.hits.length = 0;
  });

  test('only http and https may be called', async () => {
    for (const url of ['ftp://127.0.0.1/x', 'file:///etc/passwd', 'data:text/plain,hi']) {
      await assert.rejects(allowing(url), (e) => e instanceof PalaiError && e.slug === 'egress-denied' && /http and https only/.test(e.message));
    }
    await assert.rejects(allowing('not a url'), (e) => e instanceof PalaiError && e.slug === 'invalid-request');
  });

  test('a redirect is returned as the response, never followed, whatever redirect mode the caller asked for', async () => {
    for (const redirect of ['follow', 'manual', undefined] as const) {
      const res = await allowing(`${redirector.url}/start`, { method: 'POST', body: '{}', ...(redirect ? { redirect } : {}) });
      assert.equal(res.status, 307);
      assert.equal(res.headers.get('location'), `${v6.url}/start`);
    }
    assert.equal(v6.hits.length, 0, 'the redirect target was never called');
  });

  test('text, bytes and streamed bodies, a compressed answer asked for, a 204 and a canceled call answer as fetch does, on one reused connection', async () => {
    let connections = 0;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (req.url === '/empty') return void res.writeHead(204).end();
        if (req.url === '/slow') return void res.writeHead(200).write('partial');
        if (req.url === '/gzip' && String(req.headers['accept-encoding']).includes('gzip'))
          return void res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('hello, compressed'));
        res.writeHead(201, [
          ['content-type', 'application/json'],
          ['set-cookie', 'a=1'],
          ['set-cookie', 'b=2'],
        ]);
        res.end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] ?? null }));
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const text = await allowing(`${base}/echo?x=1`, { method: 'post', body: 'plain', headers: new Headers({ 'content-type': 'text/plain' }) });
      assert.equal(text.status, 201);
      assert.equal(text.url, `${base}/echo?x=1`);
      assert.deepEqual(text.headers.getSetCookie(), ['a=1', 'b=2']);
      assert.deepEqual(await text.json(), { method: 'POST', body: 'plain', type: 'text/plain' });
      const bytes = await allowing(`${base}/echo`, { method: 'PUT', body: new TextEncoder().encode('bytes') });
      assert.deepEqual(await bytes.json(), { method: 'PUT', body: 'bytes', type: null });
      const streamed = await allowing(`${base}/echo`, {
        method: 'POST',
        body: new Blob(['a stream']).stream(),
        duplex: 'half',
      } as RequestInit);
      assert.deepEqual(await streamed.json(), { method: 'POST', body: 'a stream', type: null });
      const compressed = await allowing(`${base}/gzip`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(await compressed.text(), 'hello, compressed');
      for (let i = 0; i < 3; i++) {
        const empty = await allowing(`${base}/empty`, { method: 'POST', body: '{}' });
        assert.equal(empty.status, 204);
        assert.equal(empty.body, null);
      }
      const cancel = new AbortController();
      const slow = await allowing(`${base}/slow`, { method: 'POST', body: '{}', signal: cancel.signal });
      const reader = slow.body!.getReader();
      assert.equal(new TextDecoder().decode((await reader.read()).value), 'partial');
      const reason = new Error('no longer wanted');
      cancel.abort(reason);
      await assert.rejects(reader.read());
      await assert.rejects(allowing(`${base}/echo`, { method: 'POST', body: '{}', signal: cancel.signal }), (e) => e === reason);
      // The streamed body and the canceled call may each cost a connection; the plain calls share one.
      assert.ok(connections <= 3, `${connections} connections for 8 calls`);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('DNS rebinding: the name is resolved once per connection, and the connection goes to the address that was checked', async () => {
    // A DNS server that answers a public address first and loopback afterwards.
    const answers: ResolvedAddress[][] = [[{ address: PUBLIC_ADDRESS, family: 4 }], [{ address: '127.0.0.1', family: 4 }]];
    let resolutions = 0;
    const resolve: Resolver = async () => answers[Math.min(resolutions++, answers.length - 1)];
    const rebinding = createEgressFetch({ allowHosts: [], resolve });
    const stop = new AbortController();
    const attempts = watchConnectionAttempts(() => stop.abort());
    try {
      const port = new URL(v4.url).port;
      await assert.rejects(rebinding(`http://rebind.example:${port}/x`, { signal: stop.signal }));
      assert.equal(resolutions, 1, 'resolved once for the one connection');
      assert.deepEqual(attempts.ips, [PUBLIC_ADDRESS], 'connected to the address that was checked');
      assert.equal(v4.hits.length, 0);
    } finally {
      attempts.stop();
      await rebinding.close();
    }
  });

  test('every address a name resolves to is checked: one refused address refuses the call, before any connection', async () => {
    let resolutions = 0;
    const resolve: Resolver = async () => {
      resolutions++;
      return [
        { address: PUBLIC_ADDRESS, family: 4 },
        { address: '169.254.169.254', family: 4 },
      ];
    };
    const mixed = createEgressFetch({ allowHosts: [], resolve });
    const attempts = watchConnectionAttempts();
    try {
      await assert.rejects(mixed('http://metadata.example/latest'), (e) => assertRefused(e, 'metadata.example (169.254.169.254)', /link-local/));
      assert.equal(resolutions, 1);
      assert.deepEqual(attempts.ips, []);
    } finally {
      attempts.stop();
      await mixed.close();
    }
  });

  test("the socket's lookup answers both of Node's forms (all: true, and one address of a family) with exactly the checked addresses", async () => {
    const addresses: ResolvedAddress[] = [
      { address: '8.8.8.8', family: 4 },
      { address: '2001:4860:4860::8888', family: 6 },
    ];
    const lookup = guardedLookup(async () => addresses);
    const all = await new Promise<unknown>((resolve, reject) => lookup('dns.example', { all: true }, (err, found) => (err ? reject(err) : resolve(found))));
    assert.deepEqual(all, addresses);
    const six = await new Promise<unknown[]>((resolve, reject) =>
      lookup('dns.example', { family: 6 }, (err, address, family) => (err ? reject(err) : resolve([address, family]))),
    );
    assert.deepEqual(six, ['2001:4860:4860::8888', 6]);
    const any = await new Promise<unknown[]>((resolve, reject) =>
      lookup('dns.example', {}, (err, address, family) => (err ? reject(err) : resolve([address, family]))),
    );
    assert.deepEqual(any, ['8.8.8.8', 4]);

    const refusing = guardedLookup(async () => [{ address: '::ffff:a9fe:a9fe', family: 6 }]);
    for (const options of [{ all: true }, { family: 6 }]) {
      const error = await new Promise<unknown>((resolve) => refusing('dns.example', options, (err) => resolve(err)));
      assertRefused(error, 'dns.example (::ffff:a9fe:a9fe)', /::ffff:a9fe:a9fe, link-local, cloud metadata \(169\.254\.0\.0\/16\)/);
    }
  });
});

const FAILED_MODEL_CASES = [
  { provider: 'openai', baseUrl: (origin: string) => `${origin}/v1`, path: '/v1/responses' },
  { provider: 'openai-chat', baseUrl: (origin: string) => `${origin}/v1`, path: '/v1/chat/completions' },
  { provider: 'anthropic', baseUrl: (origin: string) => origin, path: '/v1/messages' },
] as const;

await describeEachStore('egress on runs', (ctx) => {
  before(() => {
    v4.hits.length = 0;
    v6.hits.length = 0;
    redirector.hits.length = 0;
  });

  /** The output the run's one http_post call got. */
  const toolOutput = (response: any): any => JSON.parse(toolResult(response.output)!.output);

  for (const { provider, baseUrl, path } of FAILED_MODEL_CASES) {
    test(`${provider}: a 307 from an allowed provider host to [::1] is not followed; the run fails saying so`, async () => {
      const name = `${provider}-redirected`;
      await createAgent(ctx, { name, model: { provider, name: 'scenario-text', base_url: baseUrl(redirector.url) } });
      const before = redirector.hits.length;
      const res = await respond(ctx, { model: name, input: 'hi' });
      assert.equal(res.status, 'failed');
      assert.equal(res.error.code, 'model-provider-error');
      assert.equal(res.error.provider_status, 307);
      assert.ok(res.error.message.startsWith(`${provider}: `), res.error.message);
      assert.ok(res.error.message.includes(`redirecting to "${v6.url}${path}"; redirects are not followed`), res.error.message);
      assert.equal(redirector.hits.length - before, 1, 'a redirect is final: not retried');
      assert.equal(v6.hits.length, 0, 'the redirect target was never called');
    });

    test(`${provider}: a base_url on a refused address fails the run at once with egress-denied naming the host`, async () => {
      const name = `${provider}-refused`;
      await createAgent(ctx, { name, model: { provider, name: 'scenario-text', base_url: baseUrl(v6.url) } });
      const res = await respond(ctx, { model: name, input: 'hi' });
      assert.equal(res.status, 'failed');
      assert.equal(res.error.code, 'egress-denied');
      assert.match(res.error.type, /egress-denied$/);
      assert.match(res.error.message, /^Outbound call to ::1 refused: ::1, loopback \(::1\/128\)/);
      assert.match(res.error.message, /PALAI_EGRESS_ALLOW_HOSTS/);
      assert.equal(v6.hits.length, 0);
      const { rows } = await ctx().hub.kernel.db.query<{ model_attempts: number }>('SELECT model_attempts FROM responses WHERE id = $1', [res.id]);
      assert.equal(rows[0].model_attempts, 1, 'a refusal is not retried');
    });

    test(`${provider}: an unresolvable host is a provider error naming the host, not an internal error`, async () => {
      const name = `${provider}-unresolvable`;
      await createAgent(ctx, { name, model: { provider, name: 'scenario-text', base_url: baseUrl('http://palai-test.invalid') } });
      const res = await respond(ctx, { model: name, input: 'hi' });
      assert.equal(res.status, 'failed');
      assert.equal(res.error.code, 'model-provider-error');
      assert.match(res.error.message, /palai-test\.invalid/);
    });
  }

  test('a name that resolves to loopback is refused though 127.0.0.1 is allowed: the allow list matches the host as written', async () => {
    await createAgent(ctx, {
      name: 'via-localhost',
      model: { provider: 'openai-chat', name: 'scenario-text', base_url: `http://localhost:${new URL(v4.url).port}/v1` },
    });
    const res = await respond(ctx, { model: 'via-localhost', input: 'hi' });
    assert.equal(res.status, 'failed');
    assert.equal(res.error.code, 'egress-denied');
    assert.match(res.error.message, /^Outbound call to localhost \((127\.0\.0\.1|::1)\) refused/);
    assert.equal(v4.hits.length, 0);
  });

  const httpPostAgent = (name: string, url: string) =>
    createAgent(ctx, {
      name,
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'http_post', arguments: { url, body: { a: 1 } } }] }, { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'http_post' }],
    });

  test('http_post: a 307 is its result, and its target is never called', async () => {
    await httpPostAgent('post-redirected', `${redirector.url}/hook`);
    const res = await respond(ctx, { model: 'post-redirected', input: 'post it' });
    assert.equal(res.status, 'completed', JSON.stringify(res.error));
    assert.equal(toolOutput(res).status, 307);
    assert.equal(redirector.hits.at(-1)?.path, '/hook');
    assert.equal(v6.hits.length, 0);
  });

  test('http_post: a refused destination is a tool result naming the host, and the run goes on', async () => {
    await httpPostAgent('post-refused', `${v6.url}/hook`);
    const res = await respond(ctx, { model: 'post-refused', input: 'post it' });
    assert.equal(res.status, 'completed', JSON.stringify(res.error));
    assert.match(toolOutput(res).error, /^Outbound call to ::1 refused: ::1, loopback/);
    assert.equal(res.output_text, 'done');
    assert.equal(v6.hits.length, 0);
  });

  test('http_post: an allowed host is reached, with the idempotency key', async () => {
    await httpPostAgent('post-allowed', `${v4.url}/hook`);
    const res = await respond(ctx, { model: 'post-allowed', input: 'post it' });
    assert.equal(res.status, 'completed', JSON.stringify(res.error));
    assert.deepEqual(toolOutput(res), { status: 200, body: 'ok' });
    const [hit] = v4.hits;
    assert.equal(hit.path, '/hook');
    assert.match(String(hit.headers['idempotency-key']), new RegExp(`^${res.id}:call_`));
  });
});
