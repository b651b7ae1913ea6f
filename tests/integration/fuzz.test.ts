// Bad input is an answer, not a crash — for any input. Every operation of the
// OpenAPI document gets requests generated from its schemas (bodies wrong in one
// place, text the store cannot hold, JSON nested too deep, bytes that are not JSON,
// hostile path segments, query values and headers, corrupt compressed bodies), and
// every answer must be below 500, a problem+json when refused, what the document
// declares when accepted, and a refused request writes nothing. A spawned
// `palai serve` then takes raw bytes no client library sends, and still answers.
// Seeded: PALAI_TEST_SEED replays a run; a failure prints the shrunk request.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { operations, type OperationDescriptor } from '../../generated/operations.js';
import { cleanUpProcesses, startPalai, tempDir, userEnv, within } from '../support/cli.js';
import { describeEachStore } from '../support/hub.js';
import { freshPostgresDatabase } from '../support/stores.js';
import { assertAnswer, assertProblemAnswer, settle, snapshot } from '../support/fuzz/oracle.js';
import { checkProperty } from '../support/fuzz/property.js';
import { rawBytes, rawCases, sendRaw } from '../support/fuzz/raw-http.js';
import { fuzzCases, type World } from '../support/fuzz/requests.js';
import { OMIT, validValue } from '../support/fuzz/schema-values.js';
import { component } from '../support/fuzz/document.js';
import { closeConnections, send, toWire } from '../support/fuzz/wire.js';
import { createWorld } from '../support/fuzz/world.js';

/** Small, so "too large" bodies are cheap to send. */
const BODY_LIMIT = 64 * 1024;
/** Runs per operation: more where a body schema gives more to vary. */
const runsFor = (op: OperationDescriptor): number => (op.bodySchema ? 120 : op.authenticated ? 60 : 15);
const SCENARIO_RUNS = 30;
const MAX_SCENARIO_STEPS = 8;
const RAW_RUNS = 30;
const SERVE_KEY = 'palai_sk_fuzz_bootstrap_key_0123456789';

after(cleanUpProcesses);

await describeEachStore(
  'fuzz',
  (ctx) => {
    let world: World;
    let server: Server;
    let port: number;

    before(async () => {
      world = await createWorld(ctx, BODY_LIMIT);
      server = createServer(ctx().hub.app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(async () => {
      closeConnections();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    operations.forEach((op, index) => {
      test(`${op.operationId}: hostile requests to ${op.method} ${op.path} are answered below 500, refused ones with a problem and no write`, async (t) => {
        const { hub, projectId } = ctx();
        const answered = new Map<string, number>();
        await checkProperty(
          t,
          index,
          fuzzCases(op, world),
          async (fuzz) => {
            await settle(hub.kernel.db, projectId);
            const before = await snapshot(hub.kernel.db, projectId);
            const answer = await send(port, toWire(fuzz));
            assertAnswer(op, answer);
            const outcome = answer.status >= 400 ? `${answer.status} ${String(answer.body.type).replace('urn:palai:problem:', '')}` : String(answer.status);
            answered.set(outcome, (answered.get(outcome) ?? 0) + 1);
            if (answer.status >= 400)
              assert.deepEqual(await snapshot(hub.kernel.db, projectId), before, `a refused request wrote something: ${answer.text.slice(0, 300)}`);
          },
          runsFor(op),
        );
        t.diagnostic(
          `answered: ${[...answered]
            .sort((a, b) => b[1] - a[1])
            .map(([outcome, n]) => `${outcome} ×${n}`)
            .join(', ')}`,
        );
      });
    });

    test('an agent spec the schema accepts is refused with a problem, or created and runs without a 5xx', async (t) => {
      const { hub, projectId } = ctx();
      const createAgent = operations.find((o) => o.operationId === 'createAgent')!;
      const createResponse = operations.find((o) => o.operationId === 'createResponse')!;
      const getEvents = operations.find((o) => o.operationId === 'getResponseEvents')!;
      // Runs need no network: the fake provider, no connection, no base URL.
      const hints = {
        ...world.hints,
        'ModelSpec.provider': fc.constant('fake'),
        'ModelSpec.connection': fc.constant(OMIT),
        'ModelSpec.base_url': fc.constant(OMIT),
        'CreateAgentRequest.name': fc.stringMatching(/^scenario-[a-z0-9]{10}$/),
      };
      // At most MAX_SCENARIO_STEPS steps a run: a script calling a tool at every step would otherwise run to
      // max_steps (up to 1000, 100 when unset), still writing when the next case takes its snapshot.
      const specs = validValue(component('CreateAgentRequest'), { hints, component: 'CreateAgentRequest', depth: 0 }).map((spec) => {
        const { limits } = spec as { limits?: { max_steps?: number } };
        return { ...(spec as object), limits: { ...limits, max_steps: Math.min(limits?.max_steps ?? MAX_SCENARIO_STEPS, MAX_SCENARIO_STEPS) } };
      });
      const outcomes = new Map<string, number>();
      const tally = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      await checkProperty(
        t,
        100,
        fc.tuple(specs, fc.constantFrom('hi', 'what is the weather in Oslo?', '')),
        async ([spec, input]) => {
          await settle(hub.kernel.db, projectId);
          const before = await snapshot(hub.kernel.db, projectId);
          const json = (path: string, body: unknown) => ({
            method: 'POST',
            path,
            headers: { authorization: `Bearer ${world.apiKey}`, 'content-type': 'application/json' },
            body: Buffer.from(JSON.stringify(body)),
          });
          const agent = await send(port, json('/v1/agents', spec));
          assertAnswer(createAgent, agent);
          if (agent.status >= 400) {
            tally(`agent refused (${String(agent.body.type).replace('urn:palai:problem:', '')})`);
            assert.deepEqual(await snapshot(hub.kernel.db, projectId), before, 'a refused agent wrote something');
            return;
          }
          const run = await send(port, json('/v1/responses', { model: agent.body.name, input: input || 'x' }));
          assertAnswer(createResponse, run);
          tally(run.status === 200 ? `run ${run.body.status}` : `run refused (${run.status})`);
          if (run.status !== 200) return;
          const events = await send(port, {
            method: 'GET',
            path: `/v1/responses/${run.body.id}/events`,
            headers: { authorization: `Bearer ${world.apiKey}` },
            body: null,
          });
          assertAnswer(getEvents, events);
        },
        SCENARIO_RUNS,
      );
      t.diagnostic(
        `outcomes: ${[...outcomes]
          .sort((a, b) => b[1] - a[1])
          .map(([outcome, n]) => `${outcome} ×${n}`)
          .join(', ')}`,
      );
    });

    test('after the fuzzing the hub still answers: /healthz, /readyz, and an agent that runs', async () => {
      const { http, auth } = ctx();
      assert.equal((await http.get('/healthz')).status, 200);
      assert.equal((await http.get('/readyz')).status, 200);
      const agent = await http
        .post('/v1/agents')
        .set(auth)
        .send({ name: 'after-fuzz', model: { provider: 'fake' } });
      assert.equal(agent.status, 201, agent.text);
      const run = await http.post('/v1/responses').set(auth).send({ model: 'after-fuzz', input: 'still here' });
      assert.equal(run.status, 200, run.text);
      assert.equal(run.body.output_text, 'still here');
    });

    test('palai serve takes raw bytes no client library sends, answers each below 500, and still serves afterwards', { timeout: 120_000 }, async (t) => {
      const kind = ctx().kind;
      const database = kind === 'postgres' ? await freshPostgresDatabase() : null;
      try {
        const env = userEnv({
          PALAI_HOME: `${tempDir('palai-fuzz-')}/home`,
          PALAI_BOOTSTRAP_API_KEY: SERVE_KEY,
          PALAI_MAX_BODY_BYTES: String(BODY_LIMIT),
          ...(database ? { PALAI_DATABASE_URL: database.url } : {}),
        });
        const serve = startPalai(['serve', '--port', '0'], env);
        const [, base] = await serve.waitFor(/^Palai listening on (http:\/\/\S+)$/m, 90_000);
        const servePort = Number(new URL(base).port);
        let parserRefusals = 0;
        await checkProperty(
          t,
          200,
          rawCases(SERVE_KEY),
          async (raw) => {
            const answer = await sendRaw(servePort, rawBytes(raw));
            assert.equal(serve.child.exitCode, null, `palai serve exited: ${serve.stderr()}`);
            if (answer.status === null) return; // closed unanswered: the request never became whole
            assert.ok(answer.status < 500, `answered ${answer.status}: ${answer.raw.slice(0, 500)}`);
            if (answer.status < 400) return;
            // Refused by Node's HTTP parser before express saw a request: the clientError handler answers and closes.
            if (answer.headers['connection'] === 'close') parserRefusals++;
            let body: unknown = {};
            try {
              body = JSON.parse(answer.body);
            } catch {
              assert.fail(`a ${answer.status} whose body is not JSON: ${answer.raw.slice(0, 500)}`);
            }
            assertProblemAnswer({ status: answer.status, headers: answer.headers, text: answer.body, body }, raw.requestLine.slice(0, 60));
          },
          RAW_RUNS,
        );
        t.diagnostic(`${parserRefusals} of ${RAW_RUNS} answered with Connection: close (mostly refused by Node's HTTP parser before reaching express)`);

        const health = await fetch(`${base}/healthz`);
        assert.equal(health.status, 200);
        const headers = { Authorization: `Bearer ${SERVE_KEY}`, 'Content-Type': 'application/json' };
        const agent = await fetch(`${base}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ name: 'after-raw', model: { provider: 'fake' } }) });
        assert.equal(agent.status, 201, await agent.text());
        const run = await fetch(`${base}/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: 'after-raw', input: 'alive' }) });
        assert.equal(((await run.json()) as { output_text: string }).output_text, 'alive');

        serve.child.kill('SIGTERM');
        assert.equal(await within(serve.exited, 30_000, 'shutdown after SIGTERM'), 0, serve.stderr());
        assert.doesNotMatch(serve.stdout() + serve.stderr(), /unhandled error/, 'an error reached the generic 500 handler');
      } finally {
        await database?.drop();
      }
    });
  },
  { maxBodyBytes: BODY_LIMIT, syncWaitSeconds: 5 },
);
