// The client under test for @modelcontextprotocol/conformance's client
// scenarios: `node --import tsx tests/mcp/client-conformance-driver.ts <server-url>`
// with MCP_CONFORMANCE_SCENARIO set, as the suite runs it. It drives Palai's MCP
// client the way a user does: a hub on an in-memory store registers the
// scenario's server (POST /v1/mcp_servers), lists its tools, and — for the
// scenarios that call a tool — runs an agent whose fake model calls it. The
// others (the handshake, the authorization flows) only list tools, through the
// client alone, which is quicker: Palai sends the headers registered with a
// server and has no OAuth flow.
import { startHub } from '../../cli/hub.js';
import { withSlice } from '../support/hub.js';
import { McpClientPool } from '../../adapters/mcp/client/client-pool.js';
import { createProject } from '../../core/auth/projects.js';
import { loadConfig } from '../../core/config.js';
import { createEgressFetch } from '../../core/egress/guarded-fetch.js';
import { createLogger } from '../../core/logger.js';
import { PgliteDb } from '../../core/store/pglite-db.js';

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
/** The suite serves on `localhost`; a user would allow it the same way. */
const ALLOW_HOSTS = ['localhost', '127.0.0.1'];

/** The tool each scenario expects its client to call, with arguments. */
const CALLS: Record<string, { tool: string; arguments: Record<string, unknown> }> = {
  tools_call: { tool: 'add_numbers', arguments: { a: 2, b: 3 } },
  'sse-retry': { tool: 'test_reconnection', arguments: {} },
  'elicitation-sep1034-client-defaults': { tool: 'test_client_elicitation_defaults', arguments: {} },
};

async function listThroughClient(): Promise<boolean> {
  const egress = createEgressFetch({ allowHosts: ALLOW_HOSTS });
  const pool = new McpClientPool(egress, createLogger('silent'));
  try {
    const tools = await pool.listTools({
      transport: 'streamable_http',
      id: 'mcps_conformance',
      projectId: 'proj_conformance',
      name: 'conformance',
      url,
      headers: {},
    });
    console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);
    return true;
  } catch (error) {
    console.error((error as Error).message);
    return false;
  } finally {
    await pool.close();
    await egress.close();
  }
}

async function runThroughHub(): Promise<boolean> {
  const db = await PgliteDb.open(null);
  const hub = await startHub({
    config: { ...loadConfig({}), logLevel: 'silent', egressAllowHosts: ALLOW_HOSTS, pollIntervalMs: 50 },
    db,
    logger: createLogger('silent'),
    env: {},
  });
  try {
    const api = withSlice(hub, 'mcp');
    const project = await createProject(db, 'conformance');
    await api.mcpServers.create(project.id, { name: 'conformance', url });
    const tools = await api.mcpServers.tools(project.id, 'conformance');
    console.log(`tools: ${tools.data.map((t) => t.name).join(', ')}`);
    const call = CALLS[scenario];
    if (!call) return true;
    const tool = tools.data.find((t) => t.name === call.tool);
    if (!tool) throw new Error(`the server has no tool ${call.tool}`);
    await api.agents.create(project.id, {
      name: 'conformance',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: tool.model_name, arguments: call.arguments }] }, { text: 'done' }] },
      tools: [{ type: 'mcp', server_label: 'conformance', require_approval: 'never' }],
    });
    const admitted = await api.responses.admit(project.id, { agent: 'conformance', input: [{ role: 'user', content: 'go' }] });
    const state = await api.responses.waitUntilSettled(project.id, admitted.id, 25_000);
    const output = state.output.find((item) => item.type === 'function_call_output') as { output: string } | undefined;
    console.log(`${state.status}: ${output?.output ?? '(no tool output)'}`);
    return state.status === 'completed' && output !== undefined && !output.output.startsWith('{"error"');
  } finally {
    await hub.close();
    await db.close();
  }
}

const ok = await (scenario in CALLS ? runThroughHub() : listThroughClient()).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  return false;
});
process.exit(ok ? 0 : 1);
