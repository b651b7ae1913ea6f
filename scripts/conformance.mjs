#!/usr/bin/env node
// `npm run conformance`: the A2A TCK on both bindings and the MCP conformance
// suite's server scenarios (and its timed client scenario), against a
// `palai serve` this script starts on a fresh embedded store (or, with PALAI_CONFORMANCE_POSTGRES_URL, a fresh
// database it creates on that PostgreSQL server and drops after). Prints one
// line per suite and binding and exits 1 when a score is below its target or a
// push test or an unexpected MCP scenario fails. docs/testing.md says how.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { parse as parseYaml } from 'yaml';
import { buildAndReport } from './build.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, '.cache', 'conformance');
/** The kit (a2a-tck, branch 1.0-dev) and its pytest plugins, read-only; copied before each run since it writes reports/. */
const KIT_HOME = findKits();

/**
 * PALAI_CONFORMANCE_KITS, else `shared/conformance` beside the checkout, else beside the repository a
 * clone was made from (a clean clone in a temporary directory, as CI makes one, has no neighbours).
 */
function findKits() {
  if (process.env.PALAI_CONFORMANCE_KITS) return resolve(process.env.PALAI_CONFORMANCE_KITS);
  const beside = (dir) => join(dir, '..', 'shared', 'conformance');
  const candidates = [beside(ROOT)];
  const origin = spawnSync('git', ['-C', ROOT, 'config', '--get', 'remote.origin.url'], { encoding: 'utf8' }).stdout?.trim();
  if (origin && isAbsolute(origin)) candidates.push(beside(origin));
  return resolve(candidates.find((dir) => existsSync(join(dir, 'a2a-tck'))) ?? candidates[0]);
}
const PYTHON_PACKAGES = [
  'pytest>=8.0',
  'pytest-asyncio>=0.23',
  'httpx>=0.27',
  'grpcio>=1.60',
  'protobuf>=4.25,<7',
  'googleapis-common-protos>=1.62',
  'jsonschema>=4.21',
  'Jinja2>=3.1',
];
const AGENT = 'tck';
/** The targets: the scores a server made only of @a2a-js/sdk 1.3.0 reaches (docs/testing.md). */
const TARGETS = { jsonrpc: 100, http_json: 95.2 };
const log = (line) => process.stderr.write(`conformance: ${line}\n`);

/** Runs a command to its end (killed after `timeoutMs`), with its output. */
function run(command, args, { timeoutMs = 600_000, ...options } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL', ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** The venv under .cache/, made once from the configured package index (pip's own, or the local wheel index). */
async function pythonEnv() {
  const venv = join(CACHE, 'venv');
  const stamp = join(venv, 'palai-packages.txt');
  const wanted = PYTHON_PACKAGES.join('\n');
  const python = join(venv, 'bin', 'python');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return python;
  log('making the Python environment for the A2A TCK under .cache/conformance/venv');
  rmSync(venv, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  const made = await run('python3', ['-m', 'venv', venv]);
  if (made.code !== 0) throw new Error(`python3 -m venv failed: ${made.stderr}`);
  const index = await run('python3', ['-m', 'pip', 'config', 'get', 'global.extra-index-url']).catch(() => ({ code: 1, stdout: '' }));
  const indexUrl = index.code === 0 ? index.stdout.trim().split(/\s+/)[0] : '';
  const installed = await run(join(venv, 'bin', 'pip'), ['install', '-q', ...(indexUrl ? ['--index-url', indexUrl] : []), ...PYTHON_PACKAGES]);
  if (installed.code !== 0) throw new Error(`pip install failed: ${installed.stderr}`);
  writeFileSync(stamp, wanted);
  return python;
}

/** A fresh database on the PostgreSQL server at `serverUrl`, and how to drop it. */
async function freshDatabase(serverUrl) {
  const name = `palai_conformance_${randomBytes(6).toString('hex')}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** `palai serve` on a free port, a fresh store (`databaseUrl`, else embedded under `home`) and its own key; resolves once it listens. */
async function startHub(home, databaseUrl) {
  const apiKey = `palai_sk_conformance_${randomBytes(12).toString('hex')}`;
  const env = {
    ...process.env,
    PALAI_HOME: home,
    PALAI_BOOTSTRAP_API_KEY: apiKey,
    PALAI_SECRET_KEY: randomBytes(32).toString('base64'),
    // The TCK's webhook receiver listens on this machine.
    PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1',
    PALAI_LOG_LEVEL: process.env.PALAI_LOG_LEVEL ?? 'warn',
    HOST: '127.0.0.1',
  };
  if (databaseUrl) env.PALAI_DATABASE_URL = databaseUrl;
  else delete env.PALAI_DATABASE_URL;
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'palai.mjs'), 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise((resolvePromise, reject) => {
    const onData = (chunk) => {
      output += chunk;
      const match = /Palai listening on (http:\/\/\S+)/.exec(output);
      if (match) resolvePromise(match[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`palai serve exited (${code}):\n${output}`)));
  });
  child.stdout.resume();
  child.stderr.resume();
  return { child, url, apiKey, output: () => output };
}

/**
 * A stand-in for the host an operator configures in front of the hub: the kits
 * send no credentials, and the TCK reads the card at the root. It adds the key,
 * serves the conformance agent's 1.0 card at /.well-known/agent-card.json and
 * passes everything else on, keeping Host so the card's URLs point here.
 */
async function startFront(hubUrl, apiKey) {
  const hub = new URL(hubUrl);
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${apiKey}` };
    let path = req.url ?? '/';
    if (path === '/.well-known/agent-card.json') {
      path = `/a2a/${AGENT}/.well-known/agent-card.json`;
      headers['a2a-version'] ??= '1.0';
    }
    const upstream = httpRequest({ host: hub.hostname, port: hub.port, method: req.method, path, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

async function createAgent(hubUrl, apiKey) {
  const spec = JSON.parse(readFileSync(join(ROOT, 'scripts', 'conformance-agent.json'), 'utf8'));
  const answer = await fetch(`${hubUrl}/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(spec),
  });
  if (!answer.ok) throw new Error(`creating the conformance agent: ${answer.status} ${await answer.text()}`);
}

/** One TCK run on one binding: the kit's compatibility report. */
async function runTck(python, frontUrl, transport, workDir) {
  const kit = join(workDir, `a2a-tck-${transport}`);
  cpSync(join(KIT_HOME, 'a2a-tck'), kit, { recursive: true, filter: (source) => !/[/\\](\.git|reports|\.venv)$/.test(source) });
  const args = ['run_tck.py', '--sut-host', frontUrl, '--transport', transport, '-v', '--', '-p', 'html_stub', '-p', 'levelcount', '--webhook-host=127.0.0.1'];
  const result = await run(python, args, { cwd: kit, env: { ...process.env, PYTHONPATH: KIT_HOME } });
  writeFileSync(join(workDir, `tck-${transport}.log`), `${result.stdout}\n${result.stderr}`);
  const reportFile = join(kit, 'reports', 'compatibility.json');
  if (!existsSync(reportFile)) throw new Error(`the TCK wrote no report on ${transport} (exit ${result.code}); see ${workDir}/tck-${transport}.log`);
  return JSON.parse(readFileSync(reportFile, 'utf8'));
}

/**
 * The MUST score of one run over the requirements it tested (passed or
 * failed, as the kit counts them), leaving out those the list sets aside as
 * contradicting the spec; and what else must hold: every push test passes.
 */
export function scoreTck(report, transport, expected) {
  const setAside = new Set(Object.keys(expected));
  const must = Object.entries(report.per_requirement).filter(([, r]) => r.level === 'MUST' && (r.status === 'PASS' || r.status === 'FAIL'));
  const counted = must.filter(([id]) => !setAside.has(id));
  const passed = counted.filter(([, r]) => r.status === 'PASS').length;
  const percent = counted.length === 0 ? 0 : Math.floor((1000 * passed) / counted.length) / 10;
  const failures = Object.entries(report.per_requirement).filter(([id, r]) => r.status === 'FAIL' && !setAside.has(id));
  const pushFailures = failures.filter(([id]) => id.startsWith('PUSH-')).map(([id]) => id);
  const mustFailures = failures.filter(([, r]) => r.level === 'MUST').map(([id, r]) => `${id}: ${(r.errors[0] ?? '').replace(/\s+/g, ' ').slice(0, 200)}`);
  const stale = must.filter(([id, r]) => setAside.has(id) && r.status === 'PASS').map(([id]) => id);
  const line = `a2a-tck ${transport} MUST ${percent.toFixed(1)}% (${passed}/${counted.length}), ${must.length - counted.length} expected (contradict the spec)`;
  const ok = percent >= TARGETS[transport] && pushFailures.length === 0;
  return { line, ok, mustFailures, pushFailures, stale };
}

/** The MCP conformance suite's server scenarios against /mcp, with the listed expected failures. */
async function runMcp(frontUrl, workDir) {
  const suite = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const expectedFile = join(ROOT, 'tests', 'mcp', 'conformance-expected-failures.yaml');
  const output = join(workDir, 'mcp');
  const result = await run(process.execPath, [suite, 'server', '--url', `${frontUrl}/mcp`, '--expected-failures', expectedFile, '-o', output]);
  const text = `${result.stdout}\n${result.stderr}`;
  writeFileSync(join(workDir, 'mcp-conformance.log'), text);
  const expected = [...text.matchAll(/^\s*~ (\S+)/gmu)].length;
  const scenarios = [...text.matchAll(/^\s*[✓✗] (\S+)/gmu)].map((m) => m[1]);
  const total = new Set(scenarios).size;
  const failed = new Set([...text.matchAll(/^\s*✗ (\S+)/gmu)].map((m) => m[1]));
  const passed = total - failed.size;
  const note = total === 0 ? ` (no scenario results; see ${workDir}/mcp-conformance.log)` : '';
  return { line: `mcp-conformance ${passed} of ${total} passed, ${expected} expected (fixtures)${note}`, ok: result.code === 0 && total > 0 };
}

/**
 * The client scenario whose verdict includes a timing (the reconnection after
 * `retry` ms, 200 ms late at most), judged by the kit itself here, on a quiet
 * machine; tests/mcp/client-conformance.test.ts runs it within the suite on its
 * behaviour alone.
 */
async function runMcpClientTiming(workDir) {
  const suite = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const expectedFile = join(ROOT, 'tests', 'mcp', 'conformance-expected-failures.yaml');
  const driver = `${process.execPath} --import tsx ${join(ROOT, 'tests', 'mcp', 'client-conformance-driver.ts')}`;
  const args = [suite, 'client', '--command', driver, '--scenario', 'sse-retry', '--timeout', '90000', '--expected-failures', expectedFile];
  const result = await run(process.execPath, [...args, '-o', join(workDir, 'mcp-client')], { cwd: ROOT });
  const text = `${result.stdout}\n${result.stderr}`;
  writeFileSync(join(workDir, 'mcp-client-conformance.log'), text);
  const delay = /Client reconnected [^(]*\((\d+)ms/u.exec(text)?.[1];
  const verdict = result.code === 0 ? 'passed' : `failed${delay ? ` (reconnected after ${delay} ms)` : ''}; see ${workDir}/mcp-client-conformance.log`;
  return { line: `mcp-conformance client sse-retry ${verdict}`, ok: result.code === 0 };
}

async function main() {
  await buildAndReport(true);
  const workDir = mkdtempSync(join(tmpdir(), 'palai-conformance-'));
  if (!existsSync(join(KIT_HOME, 'a2a-tck', 'run_tck.py')))
    throw new Error(`no A2A TCK at ${KIT_HOME}/a2a-tck; set PALAI_CONFORMANCE_KITS to the folder holding a2a-tck/, html_stub.py and levelcount.py`);
  const python = await pythonEnv();
  const expected = parseYaml(readFileSync(join(ROOT, 'tests', 'a2a', 'tck-expected-failures.yaml'), 'utf8')) ?? {};
  const database = process.env.PALAI_CONFORMANCE_POSTGRES_URL ? await freshDatabase(process.env.PALAI_CONFORMANCE_POSTGRES_URL) : null;
  let hub = null;
  let front = null;
  const stop = async () => {
    front?.server.closeAllConnections();
    front?.server.close();
    if (hub && hub.child.exitCode === null) {
      const exited = new Promise((resolvePromise) => hub.child.once('exit', resolvePromise));
      hub.child.kill('SIGTERM');
      await exited;
    }
    await database?.drop();
  };
  // Interrupted, it still stops the hub it started and drops its database.
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void stop().finally(() => process.exit(130)));
  let ok = true;
  try {
    hub = await startHub(join(workDir, 'home'), database?.url);
    front = await startFront(hub.url, hub.apiKey);
    await createAgent(hub.url, hub.apiKey);
    for (const transport of ['jsonrpc', 'http_json']) {
      const score = scoreTck(await runTck(python, front.url, transport, workDir), transport, expected);
      console.log(score.line);
      if (!score.ok) {
        ok = false;
        for (const failure of score.mustFailures) log(`  ${transport} MUST failed: ${failure}`);
        for (const id of score.pushFailures) log(`  ${transport} push test failed: ${id}`);
      }
      if (score.stale.length > 0) log(`  ${transport}: listed as contradicting the spec but passed: ${score.stale.join(', ')}`);
    }
    for (const mcp of [await runMcp(front.url, workDir), await runMcpClientTiming(workDir)]) {
      console.log(mcp.line);
      ok &&= mcp.ok;
    }
  } finally {
    await stop();
    log(`reports and logs in ${workDir}`);
  }
  process.exitCode = ok ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main().catch((error) => {
    log(error instanceof Error ? error.message : String(error));
    process.exitCode = 2;
  });
}
