// The agents this process admitted runs of, by the ref a request named them by.
// Reading the agent is a statement of its own at every admission; a remembered
// agent is instead checked by the admission's one write, which inserts the
// response only while the agent is still at the remembered revision and its
// model connection still exists (connections are never changed, only deleted),
// in the same snapshot as the write. When it is not, nothing is written and
// the agent is read afresh. The memory never decides what runs: the database does.
import type { SqlParams } from '../store/sql-params.js';
import type { AgentForRun } from './agents.js';

/** The most agents a process remembers; past it, the oldest is forgotten (its next admission reads it). */
const REMEMBERED_AGENTS = 1_000;

export class AgentMemory {
  private readonly agents = new Map<string, AgentForRun>();

  /**
   * Remembers the agent as an admission just read it by `ref`. Frozen, since
   * every later run of it shares the object. An agent whose spec names a
   * connection that does not exist is not remembered: nothing could check it.
   */
  remember(projectId: string, ref: string, agent: AgentForRun): void {
    if (agent.spec.model?.connection && agent.connection === null) return;
    const key = keyOf(projectId, ref);
    this.agents.delete(key);
    this.agents.set(key, deepFreeze(agent));
    if (this.agents.size > REMEMBERED_AGENTS) this.agents.delete(this.agents.keys().next().value!);
  }

  /** The agent as last read by `ref`, to be checked by the write; null when none is remembered. */
  recall(projectId: string, ref: string): AgentForRun | null {
    return this.agents.get(keyOf(projectId, ref)) ?? null;
  }

  forget(projectId: string, ref: string): void {
    this.agents.delete(keyOf(projectId, ref));
  }
}

const keyOf = (projectId: string, ref: string): string => `${projectId}\0${ref}`;

/** The SQL condition that holds while `agent` is as remembered: its row at the remembered revision, and its connection there. */
export function rememberedAgentHolds(p: SqlParams, projectIdSql: string, agent: AgentForRun): string {
  const holds = `EXISTS (SELECT 1 FROM agents a WHERE a.id = ${p.add(agent.id, 'text')} AND a.project_id = ${projectIdSql}
       AND a.current_revision = ${p.add(agent.current_revision, 'integer')})`;
  return agent.connection ? `${holds} AND EXISTS (SELECT 1 FROM model_connections c WHERE c.id = ${p.add(agent.connection.id, 'text')})` : holds;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
