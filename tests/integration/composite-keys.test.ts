// The keys that tie a response to its project, agent and revision, and a
// journal row to its response (migration 0036): one key each, naming the
// parent with its own parents, so a row can name nothing of another project's
// or another agent's, where the single-column keys before let it.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { createProject } from '../../core/auth/projects.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

const FOREIGN_KEY_VIOLATION = { code: '23503' };

describeEachStore('composite keys of responses and their journal', (ctx) => {
  const db = () => ctx().hub.kernel.db;
  let source = '';
  let other = { projectId: '', agentId: '', revisionId: '' };
  let copies = 0;

  before(async () => {
    await createAgent(ctx, { name: 'keyed', model: { provider: 'fake', script: [{ text: 'one two' }] } });
    await createAgent(ctx, { name: 'keyed-sibling', model: { provider: 'fake' } });
    source = (await respond(ctx, { model: 'keyed', input: 'go' })).id as string;
    // An agent with a revision in another project, its rows as the agents module writes them.
    const project = await createProject(db(), `keys-${Math.random().toString(36).slice(2)}`);
    other = { projectId: project.id, agentId: `agt_keys${Date.now()}`, revisionId: `rev_keys${Date.now()}` };
    await db().query('INSERT INTO agents (id, project_id, name, current_revision) VALUES ($1, $2, $3, 1)', [other.agentId, other.projectId, 'elsewhere']);
    await db().query(`INSERT INTO agent_revisions (id, project_id, agent_id, revision, spec) VALUES ($1, $2, $3, 1, '{}')`, [
      other.revisionId,
      other.projectId,
      other.agentId,
    ]);
  });

  /** A copy of the answered response with the given columns replaced (no journal rows of its own); its id. */
  const copyResponse = async (replace: Record<string, string> = {}) => {
    const id = `${source}_key${++copies}`;
    await db().query(`INSERT INTO responses SELECT (jsonb_populate_record(r, $2::jsonb)).* FROM responses r WHERE r.id = $1`, [
      source,
      JSON.stringify({ id, ...replace }),
    ]);
    return id;
  };
  const agentOf = async (name: string) =>
    (
      await db().query<{ id: string; revision_id: string }>(
        'SELECT a.id, v.id AS revision_id FROM agents a JOIN agent_revisions v ON v.agent_id = a.id WHERE a.project_id = $1 AND a.name = $2',
        [ctx().projectId, name],
      )
    ).rows[0];
  const journal = (projectId: string, responseId: string, sequence: number) =>
    db().query(`INSERT INTO response_journal (project_id, response_id, last_sequence, type, data) VALUES ($1, $2, $3, 'probe', '{}')`, [
      projectId,
      responseId,
      sequence,
    ]);

  test('a response copied with its own project, agent and revision is accepted (the keys hold for what the kernel writes)', async () => {
    await copyResponse();
    const sibling = await agentOf('keyed-sibling');
    await copyResponse({ agent_id: sibling.id, agent_revision_id: sibling.revision_id });
  });

  test("a response naming another agent's revision, or another project's agent, is refused", async () => {
    const sibling = await agentOf('keyed-sibling');
    await assert.rejects(copyResponse({ agent_revision_id: sibling.revision_id }), FOREIGN_KEY_VIOLATION, "the sibling's revision under this agent");
    await assert.rejects(copyResponse({ agent_id: other.agentId, agent_revision_id: other.revisionId }), FOREIGN_KEY_VIOLATION, "another project's agent");
    await assert.rejects(copyResponse({ project_id: other.projectId }), FOREIGN_KEY_VIOLATION, 'this agent and its revision under another project');
  });

  test('a journal row naming its response under another project, or a response that does not exist, is refused', async () => {
    const copy = await copyResponse();
    await journal(ctx().projectId, copy, 0);
    await assert.rejects(journal(other.projectId, copy, 1), FOREIGN_KEY_VIOLATION);
    await assert.rejects(journal(ctx().projectId, `${source}_missing`, 0), FOREIGN_KEY_VIOLATION);
  });

  test("a revision of another project's agent is refused", async () => {
    const mine = await agentOf('keyed');
    await assert.rejects(
      db().query(`INSERT INTO agent_revisions (id, project_id, agent_id, revision, spec) VALUES ($1, $2, $3, 99, '{}')`, [
        `rev_keys_cross${Date.now()}`,
        other.projectId,
        mine.id,
      ]),
      FOREIGN_KEY_VIOLATION,
    );
  });
});
