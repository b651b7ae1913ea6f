// The surface-module seam as the composition root wires it: a module's HTTP
// mount is served on the API's port, its WebSocket upgrade handler receives
// the upgrades for its path through a real HTTP server (and nobody else's),
// and its loops start in the roles they run in and stop in reverse order —
// intakes first, while the store is open. (The built-in modules' outbox
// consumers and tool providers are proven by their own surfaces' suites.)
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import request from 'supertest';
import WebSocket, { WebSocketServer } from 'ws';
import { upgradeDispatcher } from '../../adapters/http/upgrade.js';
import { startHub, type Hub, type Role } from '../../cli/hub.js';
import type { KernelApi, SurfaceModule } from '../../core/api/index.js';
import { createLogger } from '../../core/logger.js';
import { openTestDatabase, storeKinds, type TestDatabase } from '../support/stores.js';
import { testConfig } from '../support/hub.js';

/** What the test module's loops saw, in order, with whether the process was closing its streams then. */
type Seen = string[];

function echoModule(seen: Seen, api: KernelApi): SurfaceModule {
  const sockets = new WebSocketServer({ noServer: true });
  sockets.on('connection', (socket, req) => {
    socket.on('message', (data) => socket.send(`echo ${data} from ${new URL(req.url ?? '/', 'http://x').searchParams.get('node')}`));
  });
  const loop = (name: string, options: { intake?: boolean; roles?: Role[] } = {}) => ({
    name,
    ...options,
    start: () => void seen.push(`start ${name}`),
    stop: () => void seen.push(`stop ${name}${api.lifecycle.closing.aborted ? ' (closing)' : ''}`),
  });
  return {
    name: 'echo',
    http: [{ path: '/echo', handler: (req, res) => void res.end(`echo ${req.url}`) }],
    upgrade: [
      { path: '/v1/echo/connect', handle: (req, socket, head) => sockets.handleUpgrade(req, socket, head, (ws) => sockets.emit('connection', ws, req)) },
    ],
    loops: [loop('first'), loop('intake', { intake: true }), loop('consumers-only', { roles: ['consumers'] }), loop('last')],
    close: async () => {
      seen.push('close');
      sockets.close();
    },
  };
}

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

function connect(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The whole answer to `request`, written as raw bytes on a fresh connection. */
function rawRequest(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.once('end', () => resolve(answer));
    socket.once('error', reject);
  });
}

/** The status line an upgrade request is answered with when it is refused. */
function refusal(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => reject(new Error('the upgrade was accepted')));
    socket.once('error', () => undefined);
  });
}

for (const kind of storeKinds.slice(0, 1)) {
  describe(`surface modules [${kind}]`, () => {
    let database: TestDatabase;
    let hub: Hub;
    let server: Server;
    let port: number;
    const seen: Seen = [];
    let closed = false;
    /** A connection the echo surface never ends itself. */
    let openBeforeDrain: Promise<WebSocket>;

    before(async () => {
      database = await openTestDatabase(kind);
      hub = await startHub({ config: testConfig(), db: database.db, logger: createLogger('silent'), role: 'all', surfaces: (api) => [echoModule(seen, api)] });
      assert.ok(hub.upgrade, 'a module serves upgrades, so the hub has an upgrade listener');
      server = createServer(hub.app).on('upgrade', hub.upgrade);
      port = await listen(server);
    });
    after(async () => {
      server.closeAllConnections();
      server.close();
      if (!closed) await hub.close();
      await database.drop();
    });

    test("a module's loops start in list order, in its roles only", () => {
      assert.deepEqual(seen, ['start first', 'start intake', 'start last']);
    });

    test("a module's HTTP mount is served on the API's port, before the REST routes", async () => {
      await request(hub.app).get('/echo/anything?x=1').expect(200, 'echo /anything?x=1');
    });

    test("a WebSocket upgrade on the module's path reaches its handler through the HTTP server", async () => {
      const socket = await connect(`ws://127.0.0.1:${port}/v1/echo/connect?node=n1`);
      const answer = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
      socket.send('hello');
      assert.equal(await answer, 'echo hello from n1');
      socket.close();
    });

    test('an upgrade on a path no module serves is refused with 404, and the server keeps serving', async () => {
      assert.equal(await refusal(`ws://127.0.0.1:${port}/v1/nobody/connect`), 404);
      assert.equal(await refusal(`ws://127.0.0.1:${port}/v1/echo/connect/deeper`), 404);
      await request(hub.app).get('/healthz').expect(200);
    });

    test('another upgrade (a client offering h2c) is served as the ordinary request it also is; with a body it is refused', async () => {
      const plain = await rawRequest(
        port,
        'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n',
      );
      assert.match(plain, /^HTTP\/1\.1 200 /);
      assert.match(plain, /"status":"ok"/);
      const withBody = await rawRequest(
        port,
        'POST /v1/agents HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
      );
      assert.match(withBody, /^HTTP\/1\.1 400 /);
    });

    test('modules that serve no upgrades get no upgrade listener, so Node answers every request itself', async () => {
      // The built-in nodes module serves one (its gateway), so the dispatcher is asked directly.
      const plain = await startHub({ config: testConfig(), db: database.db, logger: createLogger('silent'), role: 'api' });
      try {
        assert.notEqual(plain.upgrade, null);
        assert.equal(upgradeDispatcher(plain.api, plain.app, []), null);
      } finally {
        await plain.close();
      }
    });

    test('while the process drains, an upgrade is refused with 503', async () => {
      openBeforeDrain = connect(`ws://127.0.0.1:${port}/v1/echo/connect?node=stays`);
      await openBeforeDrain;
      hub.kernel.lifecycle.beginDrain();
      assert.equal(await refusal(`ws://127.0.0.1:${port}/v1/echo/connect`), 503);
    });

    test('closing stops intakes first while streams are open, then the other loops in reverse, then the module; a socket its surface left open is destroyed', async () => {
      const lingering = await openBeforeDrain;
      const ended = new Promise<void>((resolve) => lingering.once('close', () => resolve()));
      seen.length = 0;
      await hub.close();
      closed = true;
      assert.deepEqual(seen, ['stop intake', 'stop last (closing)', 'stop first (closing)', 'close']);
      await ended;
    });
  });
}
