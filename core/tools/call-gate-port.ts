// The call gate: the port through which a wing (autonomy) decides, in the
// transaction that commits a model step, whether each call the step proposes
// may be committed runnable. Only a run whose options name an objective goes
// through it (a wake); every other run pays nothing. The verdict commits with
// the call: a refused call is committed completed, its refusal the output the
// model reads, and the gate's record of it (an action row) is written by the
// call's own INSERT (tool-calls.ts), so the gate costs the step one statement.
import type { ConsequenceClass, ToolRisk } from '../../generated/schemas.js';
import type { Queryable } from '../store/db.js';

export type { ConsequenceClass };

/** What a call acts on, as a resource grant names it: an MCP tool, a node command, a node's file profile or working scope, a URL host. */
export interface GateTarget {
  type: 'mcp' | 'command' | 'channel' | 'filesystem';
  locator: string;
  /**
   * A filesystem target's paths, relative to its profile as the model sent them
   * (a workspace command's path, each file of a patch; `.` for the whole
   * profile); absent when the call may touch anything in it (an exec command).
   */
  paths?: readonly string[];
}

/** A call the model proposed, as the gate sees it. */
export interface ProposedCall {
  callId: string;
  name: string;
  /** The tool's provider kind; `unknown` when the run has no tool of that name. */
  kind: string;
  arguments: string;
  risk: ToolRisk;
  consequence: ConsequenceClass;
  /** Everything it acts on; each must be inside a grant (none: nothing a grant governs). */
  targets: readonly GateTarget[];
}

/** The run whose step it is. */
export interface GateRun {
  projectId: string;
  responseId: string;
  objectiveId: string;
}

/** What the model reads when a call is refused: the rule, the class and the policy, so it can adapt. */
export interface Refusal {
  refused: true;
  rule: string;
  class: ConsequenceClass;
  policy_hash: string | null;
  reason: string;
  /** When a period limit frees a slot again (ISO 8601). */
  resets_at?: string;
}

export interface GateVerdict {
  refusal: Refusal | null;
  /** An allowed call's confinement to parts of a file profile (paths relative to it), which the node enforces; null: none. */
  confinedTo?: string[] | null;
  /** The gate's own record of the call, written with it (a JSON row of objective_actions), or null for a call it does not record. */
  record: Record<string, unknown> | null;
}

export interface CallGate {
  /** One verdict per call, in order, decided inside the step's transaction. */
  decide(tx: Queryable, run: GateRun, calls: readonly ProposedCall[]): Promise<GateVerdict[]>;
}

/** A tool entry's class when it sets none: conservatively, by its risk. */
export function consequenceOf(risk: ToolRisk): ConsequenceClass {
  return risk === 'read' ? 'observe' : risk === 'write' ? 'external_effect' : 'destructive';
}

/** Without a gate registered, a run that names an objective runs nothing: it fails closed. */
export const NO_GATE: CallGate = {
  decide: async (_tx, _run, calls) =>
    calls.map((call) => ({
      refusal: {
        refused: true,
        rule: 'gate-unavailable',
        class: call.consequence,
        policy_hash: null,
        reason: 'This hub has no call gate for objectives; no call of a wake runs.',
      },
      record: null,
    })),
};
