// `palai nodes list|show|approve|deny|revoke|enroll`: pairing companion nodes
// straight on the store (or the running hub's, over its operator socket). An
// enrollment token is printed once, when it is made; nothing lists it again.
import type { Command } from 'commander';
import type { Node } from '../../generated/schemas.js';
import { createNodesApi } from '../../core/surfaces/nodes/create-nodes-api.js';
import type { NodesApi } from '../../core/surfaces/nodes/nodes-api.js';
import type { Db } from '../../core/store/db.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';
import { printTable } from './keys.js';
import { projectFor } from './project.js';
import { withStore } from './store.js';

const PROJECT_OPTION = ['--project <id|name>', 'project of the nodes (default: the only project; required when there are several)'] as const;

const NODE_STATES: readonly Node['state'][] = ['pending_pairing', 'connected', 'disconnected', 'degraded', 'revoked'];

const when = (seconds: number | null): string => (seconds === null ? '-' : new Date(seconds * 1000).toISOString());

/** Runs `work` with the nodes wing bound to the command's store and the chosen project. */
async function withNodes(context: CommandContext, project: string | undefined, work: (nodes: NodesApi, projectId: string) => Promise<void>): Promise<void> {
  await withStore(context, async (db: Db) => {
    const { id } = await projectFor(db, project);
    await work(createNodesApi({ db }), id);
  });
}

const positive = (flag: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`${flag} takes a whole number of at least 1, not ${JSON.stringify(value)}.`);
  return n;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];

function describeNode(context: CommandContext, node: Node): void {
  context.out(`Node ${node.id}`);
  context.out(`  state:             ${node.state}`);
  context.out(`  aliases:           ${node.aliases.join(', ') || '-'}`);
  context.out(`  display name:      ${node.display_name ?? '-'}`);
  context.out(`  platform:          ${node.platform}/${node.architecture}, companion ${node.client_version} (protocol ${node.protocol_version})`);
  context.out(`  catalog hash:      ${node.catalog_hash}`);
  context.out(`  approved hash:     ${node.approved_catalog_hash ?? '-'}`);
  context.out(`  allowed commands:  ${node.allowed_commands.join(', ') || '-'}`);
  context.out(`  usable commands:   ${node.usable_commands.join(', ') || '-'}`);
  context.out(`  last seen:         ${when(node.last_seen_at)}${node.disconnect_reason ? ` (${node.disconnect_reason})` : ''}`);
  if (node.revocation_reason) context.out(`  revoked because:   ${node.revocation_reason}`);
  context.out('  catalog:');
  for (const command of node.catalog.commands) context.out(`    ${command.name}  risk ${command.risk}, up to ${command.max_timeout_seconds} s`);
}

export function registerNodes(program: Command, context: CommandContext): void {
  const nodes = program.command('nodes').description('pair companion nodes and approve their commands (an enrollment token is shown once)');

  nodes
    .command('list')
    .description('list the nodes of the project')
    .option(...PROJECT_OPTION)
    .option('--state <state>', 'only nodes in this state (pending_pairing, connected, disconnected, degraded, revoked)')
    .action(async (options: { project?: string; state?: Node['state'] }) => {
      if (options.state && !NODE_STATES.includes(options.state))
        throw new CliError(`--state is one of ${NODE_STATES.join(', ')}, not ${JSON.stringify(options.state)}.`);
      await withNodes(context, options.project, async (api, projectId) => {
        const rows: Node[] = [];
        for (let after: string | undefined; ;) {
          const page = await api.nodes.list(projectId, { limit: 100, after, state: options.state });
          rows.push(...page.data);
          if (!page.has_more || !page.last_id) break;
          after = page.last_id;
        }
        if (rows.length === 0) {
          context.out('No nodes. Make an enrollment token with: palai nodes enroll');
          return;
        }
        printTable(
          context,
          ['ID', 'ALIASES', 'STATE', 'PLATFORM', 'USABLE', 'LAST SEEN'],
          rows.map((n) => [
            n.id,
            n.aliases.join(',') || '-',
            n.state,
            `${n.platform}/${n.architecture}`,
            n.usable_commands.join(',') || '-',
            when(n.last_seen_at),
          ]),
        );
      });
    });

  nodes
    .command('show')
    .description('show a node: its state, catalog and approved commands')
    .argument('<node>', 'the node id (node_…) or an alias')
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { project?: string }) => {
      await withNodes(context, options.project, async (api, projectId) => describeNode(context, await api.nodes.get(projectId, ref)));
    });

  nodes
    .command('approve')
    .description('pair the node (or approve its changed catalog) for commands of its advertised catalog')
    .argument('<node>', 'the node id (node_…) or an alias')
    .option('--command <name>', 'a command the node may run, such as shell.exec.v1 (repeat for several; none approves no command)', collect, [])
    .option('--alias <alias>', 'a name for the node (repeat for several; replaces its aliases; the first names its tools)', collect)
    .option('--display-name <text>', 'a human name for the node')
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { command: string[]; alias?: string[]; displayName?: string; project?: string }) => {
      await withNodes(context, options.project, async (api, projectId) => {
        const node = await api.nodes.approve(projectId, ref, {
          allowed_commands: options.command,
          ...(options.alias ? { aliases: options.alias } : {}),
          ...(options.displayName ? { display_name: options.displayName } : {}),
        });
        context.out(
          `Approved node ${node.id}${node.aliases.length ? ` (${node.aliases.join(', ')})` : ''} for ${node.allowed_commands.join(', ') || 'no command'}; it is ${node.state}.`,
        );
      });
    });

  nodes
    .command('deny')
    .description('refuse a pending node; its key is refused from now on')
    .argument('<node>', 'the node id (node_…) or an alias')
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { project?: string }) => {
      await withNodes(context, options.project, async (api, projectId) => {
        const node = await api.nodes.deny(projectId, ref);
        context.out(`Denied node ${node.id}; it is ${node.state}.`);
      });
    });

  nodes
    .command('revoke')
    .description('revoke a node: its connection is dropped and its open invocations cancelled')
    .argument('<node>', 'the node id (node_…) or an alias')
    .option('--reason <text>', 'why, shown on the node')
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { reason?: string; project?: string }) => {
      await withNodes(context, options.project, async (api, projectId) => {
        const node = await api.nodes.revoke(projectId, ref, options.reason ? { reason: options.reason } : {});
        context.out(`Revoked node ${node.id}; it is ${node.state}.`);
      });
    });

  nodes
    .command('enroll')
    .description('make an enrollment token a companion presents until it is paired, and print it once')
    .option('--name <name>', 'a label for the token')
    .option('--expires-in <seconds>', 'how long the token enrolls (default 3600, at most 86400)', positive('--expires-in'))
    .option('--max-uses <n>', 'how many new nodes may enroll with it (default 1)', positive('--max-uses'))
    .option(...PROJECT_OPTION)
    .action(async (options: { name?: string; expiresIn?: number; maxUses?: number; project?: string }) => {
      if (options.expiresIn !== undefined && options.expiresIn > 86_400) throw new CliError('--expires-in is at most 86400 seconds (a day).');
      await withNodes(context, options.project, async (api, projectId) => {
        const created = await api.nodeEnrollments.create(projectId, {
          ...(options.name ? { name: options.name } : {}),
          ...(options.expiresIn ? { expires_in_seconds: options.expiresIn } : {}),
          ...(options.maxUses ? { max_uses: options.maxUses } : {}),
        });
        context.out(`Created enrollment ${created.id}: up to ${created.max_uses} node(s), until ${when(created.expires_at)}.`);
        context.out(`Token (shown once, store it now): ${created.token}`);
        context.err('On the machine: palai node run --hub ws(s)://<hub>/v1/nodes/connect --config palai-node.yaml --home <dir> --token <token>');
      });
    });
}
