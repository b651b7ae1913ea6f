// Each bench runs once on the embedded store (in memory) and once on PostgreSQL
// when PALAI_BENCH_DATABASE_URL names a scratch database.
import { startHub } from '../cli/hub.js';
import { createProject } from '../core/auth/projects.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import type { Db } from '../core/store/db.js';
import { PgDb } from '../core/store/pg-db.js';
import { PgliteDb } from '../core/store/pglite-db.js';

export async function onEachStore(run: (store: string, db: Db) => Promise<void>): Promise<void> {
  const pglite = await PgliteDb.open(null);
  await run('embedded PGlite (in memory)', pglite);
  await pglite.close();
  if (!process.env.PALAI_BENCH_DATABASE_URL) return;
  const pg = new PgDb(process.env.PALAI_BENCH_DATABASE_URL);
  await run('PostgreSQL', pg);
  await pg.close();
}

/** What the byte benches run: a fake model answering 20 words, word by word. */
const WORDS = Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ');

/**
 * A hub on `db` (no retention of its own) with a project and an agent that
 * answers 20 words; `respond` runs one response to its end. One has run before
 * `work` starts, so the tables and their first pages exist before any count.
 */
export async function withTwentyWordAgent(db: Db, label: string, work: (projectId: string, respond: () => Promise<void>) => Promise<void>): Promise<void> {
  const hub = await startHub({
    config: { ...loadConfig({}), logLevel: 'silent', retentionCompactAfterMs: null },
    db,
    role: 'all',
    logger: createLogger('silent'),
  });
  try {
    const project = await createProject(db, `bench-${label}-${Date.now()}`);
    const agent = await hub.api.agents.create(project.id, { name: 'bench-twenty', model: { provider: 'fake', script: [{ text: WORDS }] } });
    const respond = async () => {
      const admitted = await hub.api.responses.admit(project.id, { agent: agent.id, input: [{ role: 'user', content: 'go' }] });
      await hub.api.responses.waitUntilSettled(project.id, admitted.id, 30_000);
    };
    await respond();
    await work(project.id, respond);
  } finally {
    await hub.close();
  }
}
