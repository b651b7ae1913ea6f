// A tool the agent names but this hub has no provider for (a kind the operator
// did not enable here, say) ends the run failed with a message naming the kind,
// instead of an internal error: tools resolve through the registry at run time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinTools } from '../../core/tools/builtin/builtin-provider.js';
import { ToolRegistry } from '../../core/tools/tool-registry.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

await describeEachStore(
  'tool providers',
  (ctx) => {
    test('a tool whose kind has no provider here fails the run with a message naming the kind', async () => {
      await createAgent(ctx, {
        name: 'needs-functions',
        model: { provider: 'fake', script: [{ text: 'never asked' }] },
        tools: [{ type: 'function', name: 'lookup' }],
      });
      const response = await respond(ctx, { model: 'needs-functions', input: 'x' });
      assert.equal(response.status, 'failed');
      assert.equal(response.error.code, 'invalid-request');
      assert.match(response.error.message, /"function"/);
      assert.deepEqual(response.output, [], 'the model was never called');
    });

    test('the providers it has still serve their tools', async () => {
      await createAgent(ctx, {
        name: 'echoes',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'done' }] },
        tools: [{ type: 'builtin', name: 'echo' }],
      });
      const response = await respond(ctx, { model: 'echoes', input: 'x' });
      assert.equal(response.status, 'completed');
      assert.equal(response.output_text, 'done');
    });
  },
  {},
  { tools: new ToolRegistry().register(builtinTools) },
);
