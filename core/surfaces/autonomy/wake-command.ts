// What a wake asks the kernel to admit: one message the kernel composes (the
// objective, its criteria, the approved policy and what it allows, why it
// woke), the wake's metadata, its session, and the policy's narrowing of the
// agent's tools and limits, with the tools wakes are given.
import type { AgentSpecFields } from '../../../generated/schemas.js';
import type { AdmissionCommand } from '../../responses/admission.js';
import { mcpToolName } from '../../tools/tool-names.js';
import { OBJECTIVE_SESSION_KEYS, OBJECTIVE_TOOL_TYPE, WAKE_METADATA } from './autonomy-port.js';
import type { ObjectiveRow, TriggerRow } from './objective-views.js';
import type { ApprovedPolicy } from './policy-gate.js';

/** The tools every wake has, beside the agent's own (allowed_tools never hides them). */
export const WAKE_TOOLS = ['schedule_wake', 'complete_objective', 'ask_user'] as const;

/** What woke it: the trigger (a schedule, the agent's own schedule_wake, or a manual wake) and the occurrence. */
export interface WakeCause {
  trigger: Pick<TriggerRow, 'id' | 'kind' | 'cron' | 'timezone' | 'reason'>;
  dueAt: Date;
  /** A manual wake's reason. */
  reason?: string;
}

function why({ trigger, dueAt, reason }: WakeCause): string {
  const at = dueAt.toISOString();
  if (trigger.kind === 'cron') return `the schedule "${trigger.cron}" (${trigger.timezone ?? 'UTC'}, ${trigger.id}) was due at ${at}.`;
  if (trigger.kind === 'once') return `you asked to come back at ${at} (${trigger.id}): ${trigger.reason ?? ''}`;
  return `a person woke you at ${at} (${trigger.id})${reason ? `: ${reason}` : '.'}`;
}

function allows(policy: ApprovedPolicy): string {
  const d = policy.document;
  const parts = [
    `scope: ${d.objective_scope}`,
    `consequence classes: ${d.consequence_classes.join(', ') || 'none'}`,
    `tools: ${d.allowed_tools ? d.allowed_tools.join(', ') || "none of the agent's own" : "the agent's own"}`,
  ];
  if (d.max_tokens != null) parts.push(`at most ${d.max_tokens} tokens this wake`);
  if (d.max_seconds != null) parts.push(`at most ${d.max_seconds} seconds this wake`);
  if (d.quiet_hours != null) parts.push(`quiet hours ${d.quiet_hours} (${d.timezone ?? 'UTC'})`);
  if (d.expires_at != null) parts.push(`expires ${new Date(d.expires_at * 1000).toISOString()}`);
  return parts.join('; ');
}

/** The one message a wake starts from. */
export function wakeInput(objective: ObjectiveRow, policy: ApprovedPolicy, cause: WakeCause): string {
  return [
    `You are working on objective ${objective.id}, unattended.`,
    `Objective: ${objective.description}`,
    ...(objective.success_criteria ? [`Success criteria: ${objective.success_criteria}`] : []),
    `Policy: version ${policy.version}, ${policy.hash}, approved by a person. It allows ${allows(policy)}.`,
    `Why you woke: ${why(cause)}`,
    'When the success criteria are met, call complete_objective with your evidence. To look again later, call schedule_wake with a reason. If you need a person, call ask_user.',
  ].join('\n');
}

/** The session a wake runs in: one per objective (its own, or the one it was given), or a new one each wake. */
function wakeSession(objective: ObjectiveRow): AdmissionCommand['session'] {
  if (objective.session_mode === 'per_wake') return { kind: 'new' };
  if (objective.session_id !== null) return { kind: 'id', id: objective.session_id };
  return { kind: 'key', source: OBJECTIVE_SESSION_KEYS, key: objective.id };
}

/** The wake tools the agent's own tools lack (a second entry of one would be a second tool of the same name). */
function missingWakeEntries(tools: AgentSpecFields['tools'] | null): NonNullable<AgentSpecFields['tools']> {
  const own = tools ?? [];
  return [
    ...(own.some((t) => t.type === OBJECTIVE_TOOL_TYPE) ? [] : [{ type: OBJECTIVE_TOOL_TYPE }]),
    ...(own.some((t) => t.type === 'builtin' && t.name === 'ask_user') ? [] : [{ type: 'builtin' as const, name: 'ask_user' }]),
  ];
}

/** The names a wake is offered under allowed_tools: those, the wake tools, and the MCP tools of mcp_tools by the names the model sees. */
function offeredTools(allowed: string[], mcpTools: string[] | null): string[] {
  const mcp = (mcpTools ?? []).flatMap((entry) => {
    const slash = entry.indexOf('/');
    return slash > 0 ? [mcpToolName(entry.slice(0, slash), entry.slice(slash + 1))] : [];
  });
  return [...new Set([...allowed, ...WAKE_TOOLS, ...mcp])];
}

export function wakeCommand(objective: ObjectiveRow, policy: ApprovedPolicy, cause: WakeCause, agentTools: AgentSpecFields['tools'] | null): AdmissionCommand {
  const d = policy.document;
  const limits = { ...(d.max_tokens != null ? { max_total_tokens: d.max_tokens } : {}), ...(d.max_seconds != null ? { timeout_seconds: d.max_seconds } : {}) };
  return {
    agent: objective.agent_id,
    input: [{ role: 'user', content: wakeInput(objective, policy, cause) }],
    session: wakeSession(objective),
    background: true,
    metadata: {
      [WAKE_METADATA.objective]: objective.id,
      [WAKE_METADATA.trigger]: cause.trigger.id,
      [WAKE_METADATA.dueAt]: cause.dueAt.toISOString(),
      [WAKE_METADATA.policy]: policy.hash,
    },
    options: {
      // Every call the wake proposes passes this objective's call gate (action-gate.ts).
      objective: objective.id,
      tool_entries: missingWakeEntries(agentTools),
      ...(d.allowed_tools ? { allowed_tools: offeredTools(d.allowed_tools, d.mcp_tools ?? null) } : {}),
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
    },
  };
}
