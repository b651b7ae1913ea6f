// A companion node for tests: its palai-node.yaml (one working scope in a
// temporary directory), `palai node run` as a real child process, and the
// REST calls that enroll, find and approve it.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPalai, tempDir, within, type Running } from './cli.js';
import { until } from './until.js';

export interface CompanionFiles {
  home: string;
  config: string;
  /** The directory of the working scope `work`. */
  workDir: string;
}

/** A home, a working directory and a config allowing both exec commands in scope `work`. */
export function companionFiles(options: { allowed?: string[] } = {}): CompanionFiles {
  const root = tempDir('palai-companion-');
  const workDir = join(root, 'work');
  const home = join(root, 'home');
  const config = join(root, 'palai-node.yaml');
  mkdirSync(workDir, { recursive: true });
  const allowed = options.allowed ?? ['shell.exec.v1', 'system.exec.v1'];
  writeFileSync(
    config,
    [
      `policy: { allowed_commands: [${allowed.join(', ')}], maximum_risk: privileged, max_timeout_seconds: 600, max_output_bytes: 262144 }`,
      'shell:',
      '  program: /bin/bash',
      `  working_scopes: { work: ${JSON.stringify(workDir)} }`,
      '  executables: { echo: /bin/echo, sleep: /bin/sleep }',
      '  environment_names: [CI]',
      '',
    ].join('\n'),
  );
  return { home, config, workDir };
}

/** `palai node run` against `hub` (a ws:// URL of /v1/nodes/connect). */
export function startCompanion(hub: string, files: CompanionFiles, env: NodeJS.ProcessEnv, token?: string): Running {
  return startPalai(['node', 'run', '--hub', hub, '--config', files.config, '--home', files.home, ...(token ? ['--token', token] : [])], env);
}

/** SIGKILL, no goodbye; resolves once it is gone. */
export async function killCompanion(companion: Running): Promise<void> {
  companion.child.kill('SIGKILL');
  await within(companion.exited, 10_000, 'the companion exiting after SIGKILL');
}

type Call = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** A single-use enrollment token. */
export async function enroll(call: Call): Promise<string> {
  const created = await call('POST', '/v1/node_enrollments', { name: 'test' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.token as string;
}

/** Waits for the node in state `state` (the only one of the project unless `nodeId` names it). */
export function nodeIn(call: Call, state: string, nodeId?: string): Promise<any> {
  return until(
    `a node ${nodeId ?? ''} in state ${state}`,
    async () => {
      const listed = await call('GET', `/v1/nodes?state=${state}`);
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      return (listed.body.data as any[]).find((node) => nodeId === undefined || node.id === nodeId);
    },
    100,
  );
}

/** Enrolls the companion's first start, approves it as `alias` for `commands`, and waits until it is connected. */
export async function pairCompanion(
  call: Call,
  start: (token: string) => Running,
  alias: string,
  commands: string[],
): Promise<{ companion: Running; nodeId: string }> {
  const companion = start(await enroll(call));
  const pending = await nodeIn(call, 'pending_pairing');
  const approved = await call('POST', `/v1/nodes/${pending.id}/approve`, { aliases: [alias], allowed_commands: commands });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  await nodeIn(call, 'connected', pending.id);
  return { companion, nodeId: pending.id };
}
