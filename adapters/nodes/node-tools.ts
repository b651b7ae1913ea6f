// The approved commands of a paired node as durable tools, for `{type: "node",
// node}` entries: each usable command (of `commands`, default all) is a function
// `node__<alias>__<command>` with the model-visible schema of the node's
// catalog, which the broker checks arguments against before a call.
//
//   risk       the command's descriptor's (read, write, privileged)
//   approval   require_approval "always" (or the command listed in {commands})
//              asks a human for every call; "never" for none; absent, the
//              agent's policy decides by the risk
//   a call     prepares one execution plan in the ledger (idempotent on the
//              call, so the run that takes over after a crash finds the same
//              one), commits its id as the call's checkpoint, and parks: no
//              worker waits. The process holding the node's connection sends
//              it and answers the parked call with the node's result.
//   offline    the call waits up to the plan's time to live; the wing's sweep
//              then ends it NODE_UNAVAILABLE and it is never sent
//   no answer  a plan sent but never answered (the node vanished with it) ends
//              INVOCATION_UNKNOWN when the ledger's sweep gives up on its report
import { nodeError, REPORT_GRACE_MS, type NodeCallsPort, type NodeTools } from '../../core/surfaces/nodes/node-calls-port.js';
import { commandToolName, descriptorHash } from '../../core/surfaces/nodes/wire/catalog.js';
import type { GateTarget } from '../../core/tools/call-gate-port.js';
import {
  MODEL_TOOL_NAME,
  ToolResolutionError,
  type ResolvedTool,
  type ToolCallContext,
  type ToolOutcome,
  type ToolProvider,
} from '../../core/tools/tool-port.js';
import type { NodeCommandDescriptor, NodeToolSpec } from '../../generated/schemas.js';

/** Past the ledger's own wait for a report: its sweep answers a silent node's call first, so the call and the ledger agree. */
const ANSWER_GRACE_MS = REPORT_GRACE_MS + 60_000;

interface NodeCallCheckpoint {
  invocationId: string;
  /** When the parked wait gives up: the plan's expiry plus its run time and a grace. */
  deadline: string;
}

function approvalOf(rule: NodeToolSpec['require_approval'], command: string): 'always' | 'never' | undefined {
  if (rule === 'always' || rule === 'never') return rule;
  if (rule && rule.commands.includes(command)) return 'always';
  return undefined;
}

const isCheckpoint = (value: unknown): value is NodeCallCheckpoint =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as NodeCallCheckpoint).invocationId === 'string' &&
  typeof (value as NodeCallCheckpoint).deadline === 'string';

/** The parked wait, up to `deadline`; what the call says when nobody answered by then. */
function parkUntil(deadline: string): ToolOutcome {
  return {
    kind: 'park',
    timeoutMs: Math.max(1, Date.parse(deadline) - Date.now()),
    timeoutOutput: nodeError('INVOCATION_UNKNOWN', 'The node did not report how the command ended; it is not run again.'),
  };
}

/**
 * The files a unified diff names (its `---` and `+++` lines, one `a/` or `b/`
 * off, /dev/null left out), or null when one cannot be read this simply (a
 * quoted name): then only a grant on the whole profile covers the patch. The
 * node reads the diff itself and holds the call to its confinement whatever
 * this finds; this only refuses early what no grant covers.
 */
function patchPaths(patch: unknown): string[] | null {
  if (typeof patch !== 'string') return null;
  const paths = new Set<string>();
  for (const line of patch.split('\n')) {
    if (!line.startsWith('--- ') && !line.startsWith('+++ ')) continue;
    const name = line.slice(4).split('\t', 1)[0].replace(/\r$/, '');
    if (name.startsWith('"')) return null;
    if (name === '/dev/null') continue;
    paths.add(name.startsWith('a/') || name.startsWith('b/') ? name.slice(2) : name);
  }
  return paths.size > 0 ? [...paths] : null;
}

/** The paths a workspace command names, relative to its profile; undefined for one that may touch anything there. */
function workspacePaths(command: string, input: Record<string, unknown>): string[] | undefined {
  if (command === 'workspace.patch.v1') return patchPaths(input.patch) ?? undefined;
  if (command === 'workspace.search.v1') return [typeof input.path === 'string' ? input.path : '.'];
  return [typeof input.path === 'string' ? input.path : ''];
}

/**
 * What a call acts on, as an objective's grants name it: the command, and the
 * file profile (workspace commands, with the paths they name) or working scope
 * (exec commands) it works in; a call naming no scope works in the node's
 * default one, which only a grant for every scope (`<node>/*`) covers.
 */
function nodeTargets(alias: string, command: string, args: unknown): GateTarget[] {
  const input = (args ?? {}) as Record<string, unknown>;
  const workspace = command.startsWith('workspace.');
  const where = workspace ? input.profile : input.working_scope;
  const paths = workspace ? workspacePaths(command, input) : undefined;
  return [
    { type: 'command', locator: `${alias}/${command}` },
    { type: 'filesystem', locator: `${alias}/${typeof where === 'string' ? where : ''}`, ...(paths ? { paths } : {}) },
  ];
}

/**
 * The command's schema as the model sees it. An entry that maps environment
 * names to project secrets (`env`) lets the model ask for those by name
 * (`env: ["GITHUB_TOKEN"]`) instead of giving values; each must be a name the
 * node lets the command set.
 */
function withSecretEnv(command: NodeCommandDescriptor, spec: NodeToolSpec, alias: string): Record<string, unknown> {
  const names = Object.keys(spec.env ?? {});
  const schema = command.input_schema as { properties?: Record<string, any> };
  if (names.length === 0 || !schema.properties?.env) return command.input_schema;
  const offered = Object.keys(schema.properties.env.properties ?? {});
  const missing = names.find((name) => !offered.includes(name));
  if (missing) throw new ToolResolutionError(`The node ${JSON.stringify(alias)} does not let ${command.name} set ${missing} (its environment_names).`);
  return {
    ...command.input_schema,
    properties: {
      ...schema.properties,
      env: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', enum: names.sort() },
        description: 'Environment variables to set from the project secrets the tool maps them to, by name; their values are never shown.',
      },
    },
  };
}

/** What a person approving a call of `command` is shown: exactly what will run, and the digests it runs under. */
function approvalDisplay(node: NodeTools, command: NodeCommandDescriptor, args: unknown): Record<string, unknown> {
  const input = (args ?? {}) as Record<string, unknown>;
  return {
    node: node.nodeId,
    alias: node.toolAlias,
    command: command.name,
    ...(typeof input.profile === 'string' ? { profile: input.profile } : {}),
    arguments: input,
    descriptor_digest: descriptorHash(command),
    authority_digest: node.authorityDigest,
  };
}

async function runCall(
  calls: NodeCallsPort,
  projectId: string,
  nodeId: string,
  spec: NodeToolSpec,
  command: NodeCommandDescriptor,
  args: unknown,
  context: ToolCallContext,
  display: Record<string, unknown>,
): Promise<ToolOutcome> {
  // A later run of the call (a takeover, the park's own resumption) finds its invocation.
  if (isCheckpoint(context.checkpoint)) {
    const output = await calls.outcome(context.checkpoint.invocationId);
    return output !== null ? { kind: 'output', output } : parkUntil(context.checkpoint.deadline);
  }
  // Approved by a person: only what they were shown may run. A node re-approved since, with another descriptor or authority, runs nothing.
  const shown = context.approved;
  if (shown && (shown.descriptor_digest !== display.descriptor_digest || shown.authority_digest !== display.authority_digest)) {
    return {
      kind: 'output',
      output: nodeError(
        'COMMAND_UNAVAILABLE',
        `The node's approved ${command.name} or its authority changed after this call was shown for approval; nothing ran.`,
      ),
    };
  }
  // With a secret environment, the model names variables and the hub binds their secrets: the input carries no values.
  const { env: asked, ...rest } = (args ?? {}) as Record<string, unknown>;
  const secretEnv = spec.env && Array.isArray(asked) ? (asked as string[]).map((name) => ({ name, secret: spec.env![name].secret })) : undefined;
  const prepared = await calls.prepare(projectId, {
    responseId: context.responseId,
    callId: context.callId,
    nodeId,
    command: command.name,
    input: secretEnv ? rest : ((args ?? {}) as Record<string, unknown>),
    ...(secretEnv?.length ? { secretEnv } : {}),
    ...(spec.timeout_seconds !== undefined ? { timeoutSeconds: spec.timeout_seconds } : {}),
    // A wake's grant on part of the profile: the node holds the call to it, symlinks resolved.
    ...(context.confinedTo ? { within: [...context.confinedTo] } : {}),
  });
  if (prepared.output !== null) return { kind: 'output', output: prepared.output };
  const deadline = new Date(prepared.expiresAt.getTime() + prepared.timeoutSeconds * 1000 + ANSWER_GRACE_MS).toISOString();
  await context.saveCheckpoint({ invocationId: prepared.invocationId, deadline } satisfies NodeCallCheckpoint);
  return parkUntil(deadline);
}

/** The provider of `node` tool entries: it reads a node's usable commands and prepares its calls through the nodes wing. */
export function nodeTools(calls: NodeCallsPort): ToolProvider<NodeToolSpec> {
  return {
    kind: 'node',

    async resolve(spec, { projectId }): Promise<ResolvedTool[]> {
      const node = await calls.tools(projectId, spec.node);
      if (!node) throw new ToolResolutionError(`The node ${JSON.stringify(spec.node)} is not a paired node of this project (unknown, denied or revoked).`);
      const listed = spec.commands ? new Set(spec.commands) : null;
      const byName = new Map<string, NodeCommandDescriptor>();
      for (const command of node.commands) {
        if (listed && !listed.has(command.name)) continue;
        const name = `node__${node.toolAlias}__${commandToolName(command.name)}`;
        const other = byName.get(name);
        if (other)
          throw new ToolResolutionError(
            `The node ${JSON.stringify(spec.node)} has commands ${other.name} and ${command.name}, which are both ${name} to the model; list only one of them in commands.`,
          );
        if (!MODEL_TOOL_NAME.test(name))
          throw new ToolResolutionError(`The command ${command.name} of the node ${JSON.stringify(spec.node)} cannot be named for the model (${name}).`);
        byName.set(name, command);
      }
      return [...byName].map(([name, command]): ResolvedTool => {
        const approval = approvalOf(spec.require_approval, command.name);
        return {
          name,
          kind: 'node',
          description: command.description,
          parameters: withSecretEnv(command, spec, node.toolAlias),
          risk: command.risk,
          ...(approval ? { approval } : {}),
          validateArguments: true,
          target: (args) => nodeTargets(node.toolAlias, command.name, args),
          // The node's operator asks a person to approve calls in these profiles.
          ...(command.approval_profiles?.length
            ? { approvalOf: (args: unknown) => command.approval_profiles!.includes(String((args as { profile?: unknown } | null)?.profile)) }
            : {}),
          approvalDisplay: (args) => approvalDisplay(node, command, args),
          run: (args, context) => runCall(calls, projectId, node.nodeId, spec, command, args, context, approvalDisplay(node, command, args)),
        };
      });
    },
  };
}
