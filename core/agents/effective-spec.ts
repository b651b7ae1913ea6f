// What a run runs under when the surface that admitted it asked for less than
// its agent allows (a response's `options.limits` and `options.allowed_tools`):
// each limit is the smaller of the agent's and the run's, and only the allowed
// tools are offered. A run can narrow its agent this way, never widen it.
import type { AgentLimits, AgentSpecFields } from '../../generated/schemas.js';
import type { StoredRunOptions } from '../responses/responses.js';

/** The model calls a run may make when its agent sets no `limits.max_steps` (docs/tools.md). */
export const DEFAULT_MAX_STEPS = 100;

/** Every limit, each one narrowed the same way; a limit added to AgentLimits must be listed here. */
const LIMIT_NAMES = Object.keys({
  max_steps: true,
  max_tool_calls: true,
  timeout_seconds: true,
  max_total_tokens: true,
} satisfies Record<keyof AgentLimits, true>) as Array<keyof AgentLimits>;

/** The agent's own value of a limit; an agent without max_steps still stops at the default. */
const agentLimit = (limits: AgentLimits, name: keyof AgentLimits): number | undefined => limits[name] ?? (name === 'max_steps' ? DEFAULT_MAX_STEPS : undefined);

/** The agent's spec with the run's limits applied: the smaller of the two, or whichever side sets one. */
export function effectiveSpec(spec: AgentSpecFields, options: Pick<StoredRunOptions, 'limits'>): AgentSpecFields {
  const asked = options.limits;
  if (asked === undefined) return spec;
  const own = spec.limits ?? {};
  const limits: AgentLimits = {};
  for (const name of LIMIT_NAMES) {
    const narrowing = asked[name];
    const agents = agentLimit(own, name);
    const value = narrowing === undefined ? own[name] : agents === undefined ? narrowing : Math.min(narrowing, agents);
    if (value !== undefined) limits[name] = value;
  }
  return { ...spec, limits };
}

/** The run's tools, by name, without those `allowed_tools` leaves out (all of them when it is not set). */
export function allowedTools<T>(tools: Map<string, T>, options: Pick<StoredRunOptions, 'allowed_tools'>): Map<string, T> {
  const allowed = options.allowed_tools;
  if (allowed === undefined) return tools;
  const names = new Set(allowed);
  return new Map([...tools].filter(([name]) => names.has(name)));
}
