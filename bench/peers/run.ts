// Palai beside DBOS Transact and LangGraph.js with its Postgres checkpointer,
// all calling one local fake OpenAI server (20 one-word chunks), in rounds
// interleaved with PostgreSQL's one-row-insert ceiling (pgbench). Per system
// and round: sequential p50/p99, responses/s at 16 clients, and per response
// the transactions, rows and bytes its database took, its server's CPU (and its
// PostgreSQL backends'), and the server's RSS after the round; then each
// peer's throughput against Palai's. Prints; asserts nothing.
//   node bench/peers/run.ts   (after npm install in bench/peers and at the root)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { backendsCpu, backendsCpuSince, cpuSeconds, rssMb } from './cpu.ts';
import { concurrent, percentile, sequential } from './load.ts';
import { ceiling, committed, freshDatabase, tables, type Ceiling } from './postgres.ts';
import { deploy, PALAI_ROOT, SYSTEMS, track, type Deployment, type SystemName } from './systems.ts';

const ROUNDS = Number(process.env.BENCH_PEERS_ROUNDS ?? 3);
const SEQUENTIAL = Number(process.env.BENCH_PEERS_SEQUENTIAL ?? 100);
const CONCURRENT = Number(process.env.BENCH_PEERS_CONCURRENT ?? 800);
const CLIENTS = Number(process.env.BENCH_PEERS_CLIENTS ?? 16);
const WARMUP = Number(process.env.BENCH_PEERS_WARMUP ?? 100);
const CEILING_SECONDS = Number(process.env.BENCH_PEERS_CEILING_SECONDS ?? 3);
const WORDS = 20;
const ONLY = (process.env.BENCH_PEERS_SYSTEMS ?? SYSTEMS.join(',')).split(',') as SystemName[];
/** Palai's responses/s over each peer's, as issue 31 asks. */
const GOALS: Partial<Record<SystemName, number>> = { DBOS: 2, LangGraph: 2.5 };

interface Figures {
  system: SystemName;
  p50: number;
  p99: number;
  perSecond: number;
  concurrentP50: number;
  concurrentP99: number;
  transactions: number;
  inserted: number;
  updated: number;
  bytes: number;
  cpuMs: number;
  backendsCpuMs: number;
  fakeCpuMs: number;
  /** This process's: the load generator's. */
  loadCpuMs: number;
  rssMb: number;
}

const version = (pkg: string) =>
  (JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;
const n = (value: number, digits = 1) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function startFake(): Promise<{ baseUrl: string; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [new URL('./fake-openai.ts', import.meta.url).pathname], {
    detached: true,
    env: { ...process.env, BENCH_PEERS_WORDS: String(WORDS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  track(child);
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { baseUrl: line, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

async function measure(name: SystemName, deployment: Deployment, fake: { baseUrl: string; pid: number }): Promise<Figures> {
  const step = (what: string) => process.stderr.write(`${name}: ${what}\n`);
  step('starting');
  const system = await deployment.start(fake.baseUrl, CLIENTS);
  const { database } = deployment;
  try {
    step('warming up');
    await concurrent(system.respond, WARMUP, CLIENTS, WORDS);
    const committedBefore = await committed(database.name, 11_000);
    const tablesBefore = await tables(database.url);
    const backendsBefore = await backendsCpu(database.name);
    const cpuBefore = cpuSeconds(system.pid);
    const fakeBefore = cpuSeconds(fake.pid);
    const loadBefore = process.cpuUsage();

    step('measuring');
    const latencies = await sequential(system.respond, SEQUENTIAL, WORDS);
    const load = await concurrent(system.respond, CONCURRENT, CLIENTS, WORDS);

    const cpu = cpuSeconds(system.pid) - cpuBefore;
    const fakeCpu = cpuSeconds(fake.pid) - fakeBefore;
    const loadUsage = process.cpuUsage(loadBefore);
    const backends = backendsCpuSince(backendsBefore, await backendsCpu(database.name));
    const rss = rssMb(system.pid);
    // Stopped first, so that every backend of the system has published its counts.
    await system.stop();
    const transactions = (await committed(database.name, 1_000)) - committedBefore;
    const tablesAfter = await tables(database.url);
    const responses = SEQUENTIAL + CONCURRENT;
    return {
      system: name,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      perSecond: CONCURRENT / load.seconds,
      concurrentP50: percentile(load.latencies, 50),
      concurrentP99: percentile(load.latencies, 99),
      transactions: transactions / responses,
      inserted: (tablesAfter.inserted - tablesBefore.inserted) / responses,
      updated: (tablesAfter.updated - tablesBefore.updated) / responses,
      bytes: (tablesAfter.bytes - tablesBefore.bytes) / responses,
      cpuMs: (cpu * 1000) / responses,
      backendsCpuMs: (backends * 1000) / responses,
      fakeCpuMs: (fakeCpu * 1000) / responses,
      loadCpuMs: (loadUsage.user + loadUsage.system) / 1000 / responses,
      rssMb: rss,
    };
  } finally {
    await system.stop();
  }
}

function printRound(round: number, figures: Figures[], limit: Ceiling): void {
  const palai = figures.find((f) => f.system === 'Palai');
  console.log(`\n### Round ${round}\n`);
  console.log(
    "| system | sequential p50 (p99) | responses/s, 16 clients (p50, p99) | ÷ Palai | transactions | rows inserted (updated) | bytes | server CPU | its PostgreSQL backends' CPU | RSS after |",
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const f of figures) {
    const versus = palai ? n(f.perSecond / palai.perSecond, 2) : '—';
    console.log(
      `| ${f.system} | ${n(f.p50, 2)} ms (${n(f.p99, 2)}) | ${n(f.perSecond)} (${n(f.concurrentP50)} ms, ${n(f.concurrentP99)} ms) | ${versus} | ${n(f.transactions, 2)} | ${n(f.inserted, 2)} (${n(f.updated, 2)}) | ${n(f.bytes, 0)} B | ${n(f.cpuMs, 2)} ms | ${n(f.backendsCpuMs, 2)} ms | ${n(f.rssMb, 0)} MB |`,
    );
  }
  console.log(
    `| PostgreSQL ceiling (${limit.tool}, one-row INSERT commits) | — | ${n(limit.one, 0)}/s (1 client), ${n(limit.sixteen, 0)}/s (16) | | | | | | | |`,
  );
  console.log(`\nThe fake OpenAI server's CPU per response: ${figures.map((f) => `${f.system} ${n(f.fakeCpuMs, 2)} ms`).join(', ')}.`);
  console.log(`The load generator's (this process's) CPU per response: ${figures.map((f) => `${f.system} ${n(f.loadCpuMs, 2)} ms`).join(', ')}.`);
  if (palai)
    for (const f of figures)
      if (GOALS[f.system]) {
        const ratio = palai.perSecond / f.perSecond;
        console.log(`Palai ÷ ${f.system} responses/s: ${n(ratio, 2)}× (goal ≥ ${GOALS[f.system]}×: ${ratio >= GOALS[f.system]! ? 'met' : 'not met'})`);
      }
}

const fake = await startFake();
const deployments = new Map<SystemName, Deployment>();
const ceilingDb = await freshDatabase('ceiling');
const rounds: Figures[][] = [];
try {
  for (const name of ONLY) deployments.set(name, await deploy(name));
  console.log(
    `## Peers: ${ROUNDS} rounds; per system and round ${WARMUP} warm-up, ${SEQUENTIAL} sequential and ${CONCURRENT} at ${CLIENTS} clients; a ${WORDS}-word streamed answer from ${fake.baseUrl}`,
  );
  console.log(
    `Palai from ${PALAI_ROOT}; @dbos-inc/dbos-sdk ${version('@dbos-inc/dbos-sdk')}; @langchain/langgraph ${version('@langchain/langgraph')} with @langchain/langgraph-checkpoint-postgres ${version('@langchain/langgraph-checkpoint-postgres')} and @langchain/openai ${version('@langchain/openai')}; Node.js ${process.version}`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    const figures: Figures[] = [];
    for (const [name, deployment] of deployments) figures.push(await measure(name, deployment, fake));
    const limit = await ceiling(ceilingDb.url, CEILING_SECONDS);
    rounds.push(figures);
    printRound(round, figures, limit);
  }
  if (deployments.has('Palai')) {
    console.log('\n### Palai ÷ each peer, responses/s at 16 clients, per round\n');
    for (const name of deployments.keys()) {
      if (name === 'Palai') continue;
      const ratios = rounds.map((figures) => figures.find((f) => f.system === 'Palai')!.perSecond / figures.find((f) => f.system === name)!.perSecond);
      const goal = GOALS[name]!;
      console.log(
        `- ${name}: ${ratios.map((r) => `${n(r, 2)}×`).join(', ')} (goal ≥ ${goal}×: met in ${ratios.filter((r) => r >= goal).length} of ${ratios.length})`,
      );
    }
  }
} finally {
  fake.stop();
  for (const deployment of deployments.values()) await deployment.database.drop().catch(() => undefined);
  await ceilingDb.drop().catch(() => undefined);
}
