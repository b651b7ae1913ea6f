// Tool providers: each `type` of tool entry in an agent spec is served by the
// provider registered for it; one entry may stand for several tools; tool names
// are unique across providers; the broker's argument check and approval policy
// apply to whatever a provider resolved.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkAgentSpec } from '../../core/agents/agent-spec.js';
import type { EgressFetch } from '../../core/egress/egress-port.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { builtinTools } from '../../core/tools/builtin/builtin-provider.js';
import { argumentProblems, needsApproval } from '../../core/tools/broker.js';
import { defaultTools } from '../../core/tools/default-tools.js';
import { ToolResolutionError, type ResolvedTool, type ToolCallContext, type ToolProvider, type ToolResolveContext } from '../../core/tools/tool-port.js';
import { ToolRegistry } from '../../core/tools/tool-registry.js';
import type { AgentSpecFields, ToolSpec } from '../../generated/schemas.js';

/** An egress that records what was sent and answers 201, so no test calls out. */
function recordingEgress(): EgressFetch & { sent: { url: string; init?: RequestInit }[] } {
  const sent: { url: string; init?: RequestInit }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    sent.push({ url: String(input), init });
    return new Response('accepted', { status: 201 });
  };
  return Object.assign(fetch, { sent, close: async () => {} });
}

const contextFor = (egress: EgressFetch = recordingEgress()): ToolResolveContext => ({ projectId: 'proj_1', responseId: 'resp_1', egress });

const callContext = (callId = 'call_1'): ToolCallContext => ({
  responseId: 'resp_1',
  callId,
  idempotencyKey: `resp_1:${callId}`,
  signal: new AbortController().signal,
  attempt: 1,
  checkpoint: null,
  saveCheckpoint: async () => undefined,
  answer: null,
});

/** A provider for `{ type: 'server', name, tools }` entries: one tool per listed name, as a remote server's would be. */
interface ServerSpec {
  type: 'server';
  name: string;
  tools: string[];
}

function serverProvider(seen: { spec: ServerSpec; context: ToolResolveContext }[] = []): ToolProvider<ServerSpec> {
  return {
    kind: 'server',
    async resolve(spec, context) {
      seen.push({ spec, context });
      return spec.tools.map((name): ResolvedTool => ({
        name,
        kind: 'server',
        description: `${name} on ${spec.name}`,
        parameters: { type: 'object', properties: {} },
        risk: 'write',
        validateArguments: false,
        run: async () => ({ kind: 'output', output: `${spec.name}:${name}` }),
      }));
    },
  };
}

const resolveOne = async (spec: ToolSpec): Promise<ResolvedTool> => {
  const tools = await defaultTools().resolveAll([spec], contextFor());
  assert.equal(tools.size, 1);
  return [...tools.values()][0];
};

test('a registered provider kind serves its entries and is given the resolve context', async () => {
  const seen: { spec: ServerSpec; context: ToolResolveContext }[] = [];
  const registry = defaultTools().register(serverProvider(seen));
  const context = contextFor();
  const tools = await registry.resolveAll([{ type: 'server', name: 'files', tools: ['read_file'] }], context);
  assert.deepEqual([...tools.keys()], ['read_file']);
  const tool = tools.get('read_file')!;
  assert.equal(tool.kind, 'server');
  assert.deepEqual(await tool.run({}, callContext()), { kind: 'output', output: 'files:read_file' });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].context, context);
  assert.equal(registry.get('server').kind, 'server');
});

test('one entry may yield several tools, kept in entry order beside the others', async () => {
  const registry = defaultTools().register(serverProvider());
  const tools = await registry.resolveAll(
    [
      { type: 'builtin', name: 'echo' },
      { type: 'server', name: 'files', tools: ['read_file', 'write_file', 'list_dir'] },
      { type: 'function', name: 'get_weather' },
    ],
    contextFor(),
  );
  assert.deepEqual([...tools.keys()], ['echo', 'read_file', 'write_file', 'list_dir', 'get_weather']);
  assert.deepEqual(
    [...tools.values()].map((t) => t.kind),
    ['builtin', 'server', 'server', 'server', 'function'],
  );
});

test('two tools of one name are refused, naming both entries', async () => {
  const registry = defaultTools().register(serverProvider());
  await assert.rejects(
    registry.resolveAll(
      [
        { type: 'function', name: 'echo' },
        { type: 'server', name: 'files', tools: ['read_file', 'echo'] },
      ],
      contextFor(),
    ),
    (error: unknown) => {
      assert.ok(error instanceof ToolResolutionError);
      assert.equal(error.message, 'Two tools are named "echo": one from tools[0] (function "echo") and one from tools[1] (server "files").');
      return true;
    },
  );
  await assert.rejects(
    registry.resolveAll([{ type: 'server', name: 'files', tools: ['stat', 'stat'] }], contextFor()),
    /Two tools are named "stat": both from tools\[0\] \(server "files"\)\./,
  );
});

test('an entry whose type no provider serves is refused with the registered kinds', async () => {
  const registry = defaultTools();
  assert.throws(
    () => registry.get('mcp'),
    (error: unknown) => {
      assert.ok(error instanceof ToolResolutionError);
      assert.equal(error.message, 'No tool provider is registered for tool type "mcp"; registered: builtin, function.');
      return true;
    },
  );
  await assert.rejects(registry.resolveAll([{ type: 'mcp', name: 'github' }], contextFor()), /No tool provider is registered for tool type "mcp"/);
  assert.throws(() => new ToolRegistry().get('builtin'), /registered: none\./);
});

test('a provider may not resolve tools of another kind', async () => {
  const impostor: ToolProvider<ServerSpec> = {
    kind: 'server',
    resolve: async (spec, context) => (await builtinTools.resolve({ type: 'builtin', name: 'echo' }, context)).map((t) => ({ ...t, name: spec.name })),
  };
  await assert.rejects(
    new ToolRegistry().register(impostor).resolveAll([{ type: 'server', name: 'files', tools: [] }], contextFor()),
    /The server provider resolved tool "files" with kind "builtin"\./,
  );
});

test('a built-in resolves with its schema and default risk, which the spec may override', async () => {
  const echo = await resolveOne({ type: 'builtin', name: 'echo' });
  assert.equal(echo.kind, 'builtin');
  assert.equal(echo.risk, 'read');
  assert.equal(echo.validateArguments, true);
  assert.deepEqual(echo.parameters.required, ['text']);
  assert.deepEqual(await echo.run({ text: 'hi' }, callContext()), { kind: 'output', output: 'hi' });

  const raised = await resolveOne({ type: 'builtin', name: 'echo', risk: 'privileged' });
  assert.equal(raised.risk, 'privileged');
  assert.equal((await resolveOne({ type: 'builtin', name: 'http_post' })).risk, 'write');
});

test('a built-in calls out through the egress of the resolve context, with the call idempotency key', async () => {
  const egress = recordingEgress();
  const tools = await defaultTools().resolveAll([{ type: 'builtin', name: 'http_post' }], contextFor(egress));
  const outcome = await tools.get('http_post')!.run({ url: 'https://example.test/hook', body: { a: 1 } }, callContext('call_9'));
  assert.deepEqual(outcome, { kind: 'output', output: JSON.stringify({ status: 201, body: 'accepted' }) });
  assert.equal(egress.sent.length, 1);
  assert.equal(egress.sent[0].url, 'https://example.test/hook');
  assert.equal(new Headers(egress.sent[0].init?.headers).get('idempotency-key'), 'resp_1:call_9');
});

test('an unknown built-in is refused by the provider, at agent creation and at resolution', async () => {
  const detail = 'no built-in tool is named "teleport"; known: ask_user, current_time, echo, http_post';
  assert.equal(builtinTools.validateSpec({ type: 'builtin', name: 'teleport' }), detail);
  assert.equal(builtinTools.validateSpec({ type: 'builtin', name: 'echo' }), null);
  assert.equal(defaultTools().validateSpec({ type: 'builtin', name: 'teleport' }), detail);
  assert.equal(defaultTools().validateSpec({ type: 'function', name: 'anything' }), null);
  assert.match(defaultTools().validateSpec({ type: 'mcp' }) ?? '', /no tool provider serves type "mcp"/);
  await assert.rejects(defaultTools().resolveAll([{ type: 'builtin', name: 'teleport' }], contextFor()), new ToolResolutionError(detail));

  assert.throws(
    () =>
      checkAgentSpec({
        model: { provider: 'fake' },
        tools: [
          { type: 'builtin', name: 'echo' },
          { type: 'builtin', name: 'teleport' },
        ],
      }),
    (error: unknown) => {
      assert.ok(error instanceof PalaiError);
      assert.equal(error.slug, 'validation-failed');
      assert.deepEqual(error.errors, [{ pointer: '/tools/1/name', detail }]);
      return true;
    },
  );
});

test('a client function resolves with its own schema, defaults, and waits for the caller', async () => {
  const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const fn = await resolveOne({ type: 'function', name: 'get_weather', description: 'Weather.', parameters });
  assert.equal(fn.kind, 'function');
  assert.equal(fn.description, 'Weather.');
  assert.equal(fn.parameters, parameters);
  assert.equal(fn.risk, 'read');
  assert.equal(fn.validateArguments, false);
  assert.deepEqual(await fn.run({ city: 'Oslo' }, callContext()), { kind: 'await_client' });

  const bare = await resolveOne({ type: 'function', name: 'ping', risk: 'write' });
  assert.equal(bare.description, '');
  assert.deepEqual(bare.parameters, { type: 'object', properties: {} });
  assert.equal(bare.risk, 'write');

  assert.equal((await resolveOne({ type: 'function', name: 'get_weather', parameters, strict: true })).validateArguments, true);
  assert.equal((await resolveOne({ type: 'function', name: 'ping', strict: true })).validateArguments, false);
});

test('arguments are checked against the schema of tools that validate them', async () => {
  const echo = await resolveOne({ type: 'builtin', name: 'echo' });
  assert.equal(argumentProblems(echo, { text: 'hi' }), null);
  assert.equal(argumentProblems(echo, {}), "(arguments) must have required property 'text'");
  assert.match(argumentProblems(echo, { text: 1, extra: true }) ?? '', /\/text must be string/);

  const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const loose = await resolveOne({ type: 'function', name: 'get_weather', parameters });
  assert.equal(argumentProblems(loose, {}), null);
  const strict = await resolveOne({ type: 'function', name: 'get_weather', parameters, strict: true });
  assert.equal(argumentProblems(strict, {}), "(arguments) must have required property 'city'");
  assert.equal(argumentProblems(strict, { city: 'Oslo' }), null);
});

test('a call needs approval when the policy names the tool or its risk', async () => {
  const tools = await defaultTools().resolveAll(
    [
      { type: 'builtin', name: 'echo' },
      { type: 'builtin', name: 'http_post' },
      { type: 'function', name: 'delete_all', risk: 'privileged' },
    ],
    contextFor(),
  );
  const spec = (approval?: AgentSpecFields['approval']): AgentSpecFields => ({ model: { provider: 'fake' }, ...(approval ? { approval } : {}) });
  const decide = (s: AgentSpecFields) => [...tools.values()].map((tool) => needsApproval(s, tool));

  assert.deepEqual(decide(spec()), [false, false, false]);
  assert.deepEqual(decide(spec({ tools: ['echo'] })), [true, false, false]);
  assert.deepEqual(decide(spec({ risks: ['write'] })), [false, true, false]);
  assert.deepEqual(decide(spec({ risks: ['privileged'] })), [false, false, true]);
  assert.deepEqual(decide(spec({ tools: ['echo'], risks: ['write', 'privileged'] })), [true, true, true]);
});
