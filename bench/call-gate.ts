// The call gate's cost on a wake's step (issue: at most one statement): the
// same agent — one step calling `echo`, then an answer — run as a plain
// response and as a wake of an objective, on each store. Counted: the
// statements of the transaction that commits the step with its call (BEGIN
// and COMMIT included), and of the whole run. Prints; asserts nothing.
import { startHub } from '../cli/hub.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db, Queryable } from '../core/store/db.js';
import type { ObjectivePolicyDocument } from '../generated/schemas.js';
import { record } from './figures.js';
import { onEachStore } from './stores.js';

const RUNS = Number(process.env.BENCH_GATE_RUNS ?? 20);

const POLICY: ObjectivePolicyDocument = {
  objective_scope: 'the bench',
  consequence_classes: ['observe'],
  allowed_tools: null,
  quiet_hours: null,
  expires_at: null,
};

/** The Db port, counting the statements of each transaction that inserts tool calls. */
class StepCountingDb implements Db {
  steps: number[] = [];
  constructor(private readonly inner: Db) {}
  get kind() {
    return this.inner.kind;
  }
  query<Row>(sql: string, params: unknown[] = []) {
    return this.inner.query<Row>(sql, params);
  }
  exec(sql: string) {
    return this.inner.exec(sql);
  }
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    let statements = 2;
    let insertsCalls = false;
    return this.inner
      .transaction((tx) =>
        work({
          query: <Row>(sql: string, params: unknown[] = []) => {
            statements++;
            if (/INSERT INTO tool_calls/.test(sql)) insertsCalls = true;
            return tx.query<Row>(sql, params);
          },
          exec: (sql: string) => {
            statements++;
            return tx.exec(sql);
          },
        }),
      )
      .then((result) => {
        if (insertsCalls) this.steps.push(statements);
        return result;
      });
  }
  listen(channel: string, onMessage: (payload: string) => void) {
    return this.inner.listen(channel, onMessage);
  }
  close() {
    return this.inner.close();
  }
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

export async function benchCallGate(): Promise<void> {
  await onEachStore(async (store, inner) => {
    const db = new StepCountingDb(inner);
    const hub = await startHub({ config: { ...loadConfig({}), logLevel: 'silent' }, db, role: 'all', logger: createLogger('silent') });
    try {
      const project = await createProject(db, `bench-gate-${Date.now()}`);
      const agent = await hub.api.agents.create(project.id, {
        name: 'bench-gated',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'Checked.' }] },
        tools: [{ type: 'builtin', name: 'echo' }],
      });
      const plain: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        db.steps = [];
        const admitted = await hub.api.responses.admit(project.id, { agent: agent.id, input: [{ role: 'user', content: 'go' }] });
        await hub.api.responses.waitUntilSettled(project.id, admitted.id, 30_000);
        plain.push(...db.steps);
      }
      const autonomy = hub.surfaces.slices.autonomy;
      const objective = await autonomy.objectives.create(project.id, { agent: agent.id, description: 'Echo for the bench.', priority: 0 });
      const draft = await autonomy.objectivePolicies.draft(project.id, objective.id, { document: POLICY });
      await autonomy.objectivePolicies.approve(project.id, objective.id, draft.version, draft.hash);
      const gated: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        db.steps = [];
        const wake = await autonomy.objectives.wake(project.id, objective.id, `bench ${i}`);
        if (!wake.response_id) throw new Error(`the bench's wake was skipped: ${wake.reason}`);
        await hub.api.responses.waitUntilSettled(project.id, wake.response_id, 30_000);
        gated.push(...db.steps);
      }
      const added = mean(gated) - mean(plain);
      record({
        name: `call gate (${store}): statements added to a wake's step with one call`,
        value: added,
        unit: 'statements',
        goal: { value: 1, better: 'lower' },
        note: `step transaction ${mean(plain).toFixed(1)} statements for a plain response, ${mean(gated).toFixed(1)} for a wake (${RUNS} runs each, BEGIN and COMMIT included)`,
      });
    } finally {
      await hub.close();
    }
  });
}
