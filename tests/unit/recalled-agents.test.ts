// The agents a process remembers: by project and ref, frozen, bounded, and
// never one whose named connection was not found (nothing could check it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentForRun } from '../../core/agents/agents.js';
import { AgentMemory } from '../../core/agents/recalled-agents.js';

const agent = (id: string, spec: AgentForRun['spec'], connection: AgentForRun['connection'] = null): AgentForRun => ({
  id,
  project_id: 'proj_a',
  name: id,
  current_revision: 1,
  revision_id: `rev_${id}`,
  spec,
  created_at: new Date(0),
  updated_at: new Date(0),
  connection,
});

test('an agent is remembered by project and ref, frozen, and forgotten on request', () => {
  const memory = new AgentMemory();
  const remembered = agent('agt_one', { model: { provider: 'fake' }, tools: [{ type: 'builtin', name: 'ask_user' }] });
  memory.remember('proj_a', 'one', remembered);
  assert.equal(memory.recall('proj_a', 'one'), remembered);
  assert.equal(memory.recall('proj_b', 'one'), null, 'another project');
  assert.equal(memory.recall('proj_a', 'agt_one'), null, 'another ref');
  assert.throws(() => (remembered.spec.tools as unknown[]).push({}), TypeError, 'shared by every run, so frozen all the way down');
  memory.forget('proj_a', 'one');
  assert.equal(memory.recall('proj_a', 'one'), null);
});

test('an agent whose named connection was not found is not remembered', () => {
  const memory = new AgentMemory();
  memory.remember('proj_a', 'via', agent('agt_via', { model: { connection: 'gone' } }));
  assert.equal(memory.recall('proj_a', 'via'), null);
});

test('past 1,000 agents the oldest remembered is forgotten', () => {
  const memory = new AgentMemory();
  for (let i = 0; i <= 1_000; i++) memory.remember('proj_a', `a${i}`, agent(`agt_${i}`, { model: { provider: 'fake' } }));
  assert.equal(memory.recall('proj_a', 'a0'), null);
  assert.notEqual(memory.recall('proj_a', 'a1'), null);
  assert.notEqual(memory.recall('proj_a', 'a1000'), null);
});
