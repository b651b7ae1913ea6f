// The admission command at the kernel's boundary: every surface builds one and
// the kernel admits it. A queue job and a Slack message name their agent in it
// and the admission looks the agent up once (a statement log over the store
// shows every statement the admission sends); a command that does not match
// protocols/admission.schema.json is refused by the kernel as validation-failed,
// naming the field, before anything is written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { startFakeSlackApi, type FakeSlackApi } from '../slack/fake-slack-api.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, withSlice } from '../support/hub.js';
import { StatementLog, type LoggedStatement } from '../support/statement-log.js';

const hello = [{ role: 'user' as const, content: 'hello' }];

/** How many statements of the transaction that inserted the response read an agent (other transactions, the worker's, run meanwhile). */
function agentLookups(statements: LoggedStatement[]): number {
  const admission = statements.find((s) => s.transaction !== null && /INSERT INTO responses\b/.test(s.sql));
  assert.ok(admission, 'a response was inserted');
  return statements.filter((s) => s.transaction === admission.transaction && /^\s*SELECT\b[\s\S]*\bFROM agents\b/.test(s.sql)).length;
}

let store: StatementLog;
let slack: FakeSlackApi;
before(async () => {
  slack = await startFakeSlackApi();
});
after(() => slack.close());

await describeEachStore(
  'the admission command',
  (ctx) => {
    const queue = () => withSlice(ctx().hub, 'queue').queues;
    const consumer = async (name: string, agent?: string) => {
      const body = { name, kind: 'sqs', sqs: { queue_url: `http://127.0.0.1:9/000000000000/${name}` }, paused: true, ...(agent ? { agent } : {}) };
      const res = await ctx().http.post('/v1/queue_consumers').set(ctx().auth).send(body);
      assert.equal(res.status, 201, res.text);
      return (await queue().config(ctx().projectId, res.body.id))!;
    };
    const counts = async () => {
      const { rows } = await ctx().hub.kernel.db.query<{ responses: number; sessions: number }>(
        'SELECT (SELECT count(*) FROM responses)::integer AS responses, (SELECT count(*) FROM sessions)::integer AS sessions',
      );
      return rows[0];
    };

    before(async () => {
      await createAgent(ctx, { name: 'worker', model: { provider: 'fake' } });
      await createAgent(ctx, { name: 'other', model: { provider: 'fake' } });
    });

    test('a queue job is admitted with one agent lookup, whether the consumer, the job or both name the agent', async () => {
      const fixed = await consumer('fixed', 'worker');
      const open = await consumer('open');
      const admit = async (config: typeof fixed, job: Record<string, unknown>, messageId: string) => {
        let outcome: Awaited<ReturnType<ReturnType<typeof queue>['admit']>> | undefined;
        const statements = await store.during(async () => (outcome = await queue().admit(config, { body: JSON.stringify(job), messageId })));
        assert.equal(outcome?.kind, 'admitted', JSON.stringify(outcome));
        return agentLookups(statements);
      };
      assert.equal(await admit(fixed, { input: 'by the consumer', session_key: 'conversation-1' }, 'm1'), 1, 'the consumer names it');
      assert.equal(await admit(open, { agent: 'worker', input: 'by the job' }, 'm2'), 1, 'the job names it');
      assert.equal(await admit(fixed, { agent: 'worker', input: 'by both' }, 'm3'), 1, 'both name it');
      const contradicting = await queue().admit(fixed, { body: JSON.stringify({ agent: 'other', input: 'x' }), messageId: 'm4' });
      assert.equal(contradicting.kind, 'invalid', 'a job naming another agent than its consumer is still refused');
    });

    test("a Slack message is admitted with one agent lookup, in its thread's session", async () => {
      const res = await ctx()
        .http.post('/v1/slack_bots')
        .set(ctx().auth)
        .send({ name: 'helper', agent: 'worker', bot_token: 'xoxb-admission-test', signing_secret: 'admission-signing-secret', api_url: slack.url });
      assert.equal(res.status, 201, res.text);
      const bot = (await withSlice(ctx().hub, 'slack').slackBots.config(res.body.id))!;
      const message = { eventId: 'Ev1', ts: '1800000000.000100', team: 'T1', channel: 'C1', threadTs: '1800000000.000100', user: 'U1', text: 'hello' };
      let admitted: Awaited<ReturnType<ReturnType<typeof withSlice<'slack'>>['slackBots']['admit']>> | undefined;
      const statements = await store.during(async () => (admitted = await withSlice(ctx().hub, 'slack').slackBots.admit(bot, message)));
      assert.equal(admitted?.kind, 'admitted');
      assert.equal(agentLookups(statements), 1);
      const state = await ctx().hub.api.responses.get(ctx().projectId, admitted.responseId);
      assert.equal(state.session_id, admitted.kind === 'admitted' ? admitted.sessionId : null);
    });

    test('a command that does not match its schema is validation-failed naming the field, and writes nothing', async () => {
      const { api, projectId } = { api: ctx().hub.api, projectId: ctx().projectId };
      const before = await counts();
      const cases: Array<[command: unknown, pointer: string]> = [
        [{ agent: 'worker', input: hello, options: { temperature: 3 } }, '/options/temperature'],
        [{ agent: 'worker', input: hello, session: { kind: 'key', source: 'fax', key: 'k' } }, '/session/source'],
        [{ input: hello, session: { kind: 'new' } }, '/agent'],
        [{ agent: 'worker', input: 'hello' }, '/input'],
        [{ agent: 'worker', input: [] }, '/input'],
        [{ model: 'worker', input: hello }, '/model'],
        [{ agent: 'worker', input: hello, options: { tools: [{ type: 'function', name: 'a b' }] } }, '/options/tools/0/name'],
      ];
      for (const [command, pointer] of cases) {
        await assert.rejects(api.responses.admit(projectId, command as Parameters<typeof api.responses.admit>[1]), (error: unknown) => {
          assert.ok(isPalaiError(error), `${JSON.stringify(command)}: ${String(error)}`);
          assert.equal(error.slug, 'validation-failed', JSON.stringify(command));
          assert.ok(
            error.errors?.some((e) => e.pointer === pointer),
            `${JSON.stringify(command)} names ${pointer}: ${JSON.stringify(error.errors)}`,
          );
          assert.ok(error.message.includes(error.errors![0].pointer), error.message);
          return true;
        });
      }
      assert.deepEqual(await counts(), before, 'no response and no session was written');
    });
  },
  { secretKey: 'admission-tests-secret-key-0123456789' },
  { store: (db) => (store = new StatementLog(db)) },
);
