// Starts a hub (HTTP app + worker) on a test store, with its own project and key.
import { describe, before, after } from 'node:test';
import request from 'supertest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHub, type Hub } from '../../cli/hub.js';
import type { Express } from 'express';
import { createHttpApp } from '../../adapters/http/app.js';
import { restOptions } from '../../adapters/http/surface.js';
import { createSurfaces } from '../../cli/surfaces.js';
import { createKernelApi, type KernelApi } from '../../core/api/index.js';
import type { Kernel } from '../../core/kernel.js';
import type { StdioServerDeclaration } from '../../core/surfaces/mcp/mcp-servers-port.js';
import { createApiKey } from '../../core/auth/api-keys.js';
import { createProject } from '../../core/auth/projects.js';
import { loadConfig, type PalaiConfig } from '../../core/config.js';
import { createLogger } from '../../core/logger.js';
import type { Db, StoreKind } from '../../core/store/db.js';
import type { ToolRegistry } from '../../core/tools/tool-registry.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from './stores.js';

export interface TestHub {
  kind: StoreKind;
  hub: Hub;
  apiKey: string;
  projectId: string;
  /** supertest against the app; `auth` adds the bearer header. */
  http: ReturnType<typeof request>;
  auth: { Authorization: string };
  /** Another project's key on the same hub, for tenancy checks. */
  newProjectKey(): Promise<string>;
}

export function testConfig(overrides: Partial<PalaiConfig> = {}): PalaiConfig {
  return { ...loadConfig({}), logLevel: 'silent', pollIntervalMs: 200, modelRetryBaseMs: 10, egressAllowHosts: ['127.0.0.1'], ...overrides };
}

/** The API app of a kernel with every surface module's mounts and operations, as the hub builds it (without starting anything). */
export function fullApp(kernel: Kernel): Express {
  const api = createKernelApi(kernel);
  return createHttpApp(api, restOptions(createSurfaces(kernel, api).modules));
}

/** The kernel API with one wing's slice, as the hub bound it: what that surface is given. */
export const withSlice = <W extends keyof Hub['surfaces']['slices']>(
  hub: Pick<Hub, 'api' | 'surfaces'>,
  wing: W,
): KernelApi & Hub['surfaces']['slices'][W] => ({
  ...hub.api,
  ...hub.surfaces.slices[wing],
});

/** A PALAI_MCP_STDIO_SERVERS_FILE declaring these servers, written to a temporary directory. */
export function stdioServersFile(servers: StdioServerDeclaration[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'palai-stdio-servers-')), 'servers.json');
  writeFileSync(file, JSON.stringify({ mcpServers: Object.fromEntries(servers.map(({ name, ...server }) => [name, server])) }));
  return file;
}

/** What the hub reads its allow-listed model keys from, once at start (default: this process's environment). */
export interface TestHubOptions {
  env?: Record<string, string>;
  /** The tool providers the hub offers (default: the built-in and client-function ones). */
  tools?: ToolRegistry;
  /** Only these of the test run's stores: for suites about something outside the store (a broker restart), where a second store adds nothing. */
  stores?: StoreKind[];
  /** The store the hub runs on, made from the test database (a statement log over it, say). */
  store?: (db: Db) => Db;
}

async function startTestHub(kind: StoreKind, database: TestDatabase, overrides: Partial<PalaiConfig>, options: TestHubOptions): Promise<TestHub> {
  const config = testConfig(overrides);
  const hub = await startHub({
    config,
    db: options.store ? options.store(database.db) : database.db,
    logger: createLogger('silent'),
    env: options.env ?? process.env,
    tools: options.tools,
  });
  const newProjectKey = async () => {
    const project = await createProject(database.db, `test-${Math.random().toString(36).slice(2)}`);
    return (await createApiKey(database.db, project.id, 'test')).secret;
  };
  const project = await createProject(database.db, 'test');
  const key = await createApiKey(database.db, project.id, 'test');
  return {
    kind,
    hub,
    apiKey: key.secret,
    projectId: project.id,
    http: request(hub.app),
    auth: { Authorization: `Bearer ${key.secret}` },
    newProjectKey,
  };
}

/**
 * Runs `suite` once per store kind. `ctx()` returns the running hub inside tests.
 * PostgreSQL suites skip (with the reason) when it is unreachable, unless
 * PALAI_REQUIRE_SERVICES=1, which turns that into a failure.
 */
export async function describeEachStore(
  name: string,
  suite: (ctx: () => TestHub) => void,
  overrides: Partial<PalaiConfig> = {},
  options: TestHubOptions = {},
): Promise<void> {
  for (const kind of storeKinds.filter((k) => !options.stores || options.stores.includes(k))) {
    const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
    describe(`${name} [${kind}]`, { skip: unavailable ?? false }, () => {
      let current: TestHub | null = null;
      let database: TestDatabase | null = null;
      before(async () => {
        database = await openTestDatabase(kind);
        current = await startTestHub(kind, database, overrides, options);
      });
      after(async () => {
        await current?.hub.close();
        await database?.drop();
      });
      suite(() => {
        if (!current) throw new Error('hub not started');
        return current;
      });
    });
  }
}
