// `palai objectives list|show|pause|resume|wake|policy approve`: an operator's
// view of the autonomy wing, straight on the store (or the running hub's, over
// its operator socket). A policy is approved only after its document is printed,
// so the person approves by its hash exactly what they read.
import type { Command } from 'commander';
import type { Objective, ObjectiveStatus, ObjectiveTrigger, ObjectiveWake } from '../../generated/schemas.js';
import type { AutonomyApi } from '../../core/surfaces/autonomy/autonomy-api.js';
import { createAutonomyApi } from '../../core/surfaces/autonomy/create-autonomy-api.js';
import type { Db } from '../../core/store/db.js';
import type { CommandContext } from './context.js';
import { CliError } from './errors.js';
import { printTable } from './keys.js';
import { projectFor } from './project.js';
import { withStore } from './store.js';

const PROJECT_OPTION = ['--project <id|name>', 'project of the objectives (default: the only project; required when there are several)'] as const;
const OBJECTIVE_ARGUMENT = ['<objective>', 'the objective id (obj_…)'] as const;

// A record, so that the compiler names a status the schema adds and this list lacks.
const STATUSES = Object.keys({ active: 0, paused: 0, blocked: 0, completed: 0, abandoned: 0 } satisfies Record<ObjectiveStatus, 0>) as ObjectiveStatus[];

/** How many of the latest wakes `show` prints. */
const SHOWN_WAKES = 10;
/** How much of a description a row of `list` shows. */
const DESCRIPTION_WIDTH = 48;
/** Hex digits of a policy hash `list` shows: enough to tell versions apart at a glance. */
const HASH_DIGITS = 12;

const when = (seconds: number | null): string => (seconds === null ? '-' : new Date(seconds * 1000).toISOString());

/** A cell holds one line: newlines folded, long text cut with an ellipsis. */
function truncated(text: string, width: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

function policyCell(policy: Objective['policy']): string {
  if (policy === null) return '-';
  return `v${policy.version} ${policy.hash.slice(0, policy.hash.indexOf(':') + 1 + HASH_DIGITS)}…`;
}

const statusLine = (objective: Objective): string =>
  objective.status === 'blocked' && objective.blocked_reason ? `blocked: ${objective.blocked_reason}` : objective.status;

/** Runs `work` with the autonomy wing bound to the command's store and settings, and the chosen project. */
async function withObjectives(
  context: CommandContext,
  project: string | undefined,
  work: (api: AutonomyApi, projectId: string) => Promise<void>,
): Promise<void> {
  await withStore(context, async (db: Db) => {
    const { id } = await projectFor(db, project);
    await work(createAutonomyApi({ db, config: context.config() }), id);
  });
}

const positiveVersion = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`A policy version is a whole number of at least 1, not ${JSON.stringify(value)}.`);
  return n;
};

/** Lines of `text` under a label, the later ones indented to the first's column. */
function labelled(context: CommandContext, label: string, text: string | null): void {
  const column = 20;
  const [first, ...more] = (text ?? '-').split('\n');
  context.out(`  ${`${label}:`.padEnd(column)}${first}`);
  for (const line of more) context.out(`  ${' '.repeat(column)}${line}`);
}

/** A table printed two spaces in, under a heading of `show`. */
function indentedTable(context: CommandContext, header: string[], rows: string[][]): void {
  printTable({ ...context, out: (line) => context.out(`  ${line}`) }, header, rows);
}

function describeObjective(context: CommandContext, objective: Objective, triggers: ObjectiveTrigger[], wakes: ObjectiveWake[], more: boolean): void {
  const { policy } = objective;
  context.out(`Objective ${objective.id}`);
  labelled(context, 'status', statusLine(objective));
  labelled(context, 'agent', objective.agent_id);
  const expiry = policy?.expires_at ? `, expires ${when(policy.expires_at)}` : '';
  const session = objective.session_id ?? 'from its first wake';
  labelled(context, 'policy', policy ? `version ${policy.version}, ${policy.hash}${expiry}` : 'none approved');
  labelled(context, 'session mode', objective.session_mode === 'objective' ? `objective (session ${session})` : 'per_wake');
  labelled(context, 'overlap', objective.overlap);
  labelled(context, 'description', objective.description);
  labelled(context, 'success criteria', objective.success_criteria);
  if (objective.completed_evidence) labelled(context, 'evidence', objective.completed_evidence);

  context.out('Triggers:');
  if (triggers.length === 0) context.out('  none (add a schedule: POST /v1/objectives/{id}/schedules)');
  else
    indentedTable(
      context,
      ['ID', 'KIND', 'SCHEDULE', 'STATUS', 'NEXT DUE', 'LAST FIRED', 'SKIPPED', 'LAST SKIP'],
      triggers.map((t) => [
        t.id,
        t.kind,
        t.cron === null ? '-' : `${t.cron} (${t.timezone ?? 'UTC'})`,
        t.status,
        when(t.next_due_at),
        when(t.last_fired_at),
        String(t.skipped_count),
        t.last_skip_reason ?? '-',
      ]),
    );

  context.out(more ? `Latest ${wakes.length} wakes:` : 'Wakes:');
  if (wakes.length === 0) context.out('  none yet');
  else
    indentedTable(
      context,
      ['DUE', 'OUTCOME', 'REASON', 'RESPONSE'],
      wakes.map((w) => [when(w.due_at), w.outcome, w.reason ?? '-', w.response_id ?? '-']),
    );
}

function describeWake(objectiveId: string, wake: ObjectiveWake): string {
  const answer = wake.outcome === 'admitted' ? `admitted, response ${wake.response_id}` : `skipped (${wake.reason}), no response`;
  return `Woke objective ${objectiveId} (trigger ${wake.trigger_id}, due ${when(wake.due_at)}): ${answer}.`;
}

export function registerObjectives(program: Command, context: CommandContext): void {
  const objectives = program.command('objectives').description("see agents' objectives, pause, resume and wake them, approve their policies by hash");

  objectives
    .command('list')
    .description('list the objectives of the project')
    .option(...PROJECT_OPTION)
    .option('--status <status>', `only objectives with this status (${STATUSES.join(', ')})`)
    .action(async (options: { project?: string; status?: ObjectiveStatus }) => {
      if (options.status && !STATUSES.includes(options.status))
        throw new CliError(`--status is one of ${STATUSES.join(', ')}, not ${JSON.stringify(options.status)}.`);
      await withObjectives(context, options.project, async (api, projectId) => {
        const rows: Objective[] = [];
        for (let after: string | undefined; ;) {
          const page = await api.objectives.list(projectId, { limit: 100, after, status: options.status });
          rows.push(...page.data);
          if (!page.has_more || !page.last_id) break;
          after = page.last_id;
        }
        if (rows.length === 0) {
          context.out(options.status ? `No ${options.status} objectives.` : 'No objectives. Create one with POST /v1/objectives (docs/autonomy.md).');
          return;
        }
        printTable(
          context,
          ['ID', 'AGENT', 'STATUS', 'POLICY', 'DESCRIPTION'],
          rows.map((o) => [o.id, o.agent_id, o.status, policyCell(o.policy), truncated(o.description, DESCRIPTION_WIDTH)]),
        );
      });
    });

  objectives
    .command('show')
    .description('show an objective: its status and policy, its triggers and its latest wakes')
    .argument(...OBJECTIVE_ARGUMENT)
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { project?: string }) => {
      await withObjectives(context, options.project, async (api, projectId) => {
        const objective = await api.objectives.get(projectId, ref);
        const [triggers, wakes] = await Promise.all([
          api.objectiveTriggers.list(projectId, objective.id),
          api.objectives.wakes(projectId, objective.id, { limit: SHOWN_WAKES }),
        ]);
        describeObjective(context, objective, triggers.data, wakes.data, wakes.has_more);
      });
    });

  objectives
    .command('pause')
    .description('pause an objective (the kill switch): its running wake is cancelled, no new one admitted')
    .argument(...OBJECTIVE_ARGUMENT)
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { project?: string }) => {
      await withObjectives(context, options.project, async (api, projectId) => {
        const objective = await api.objectives.update(projectId, ref, { status: 'paused' });
        context.out(`Objective ${objective.id} is ${statusLine(objective)}.`);
      });
    });

  objectives
    .command('resume')
    .description('resume an objective; without a usable policy it is blocked, and says why')
    .argument(...OBJECTIVE_ARGUMENT)
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { project?: string }) => {
      await withObjectives(context, options.project, async (api, projectId) => {
        const objective = await api.objectives.update(projectId, ref, { status: 'active' });
        context.out(`Objective ${objective.id} is ${statusLine(objective)}.`);
      });
    });

  objectives
    .command('wake')
    .description('wake an objective now, through the same gates as a schedule; prints the wake as recorded')
    .argument(...OBJECTIVE_ARGUMENT)
    .option('--reason <text>', 'why, told to the wake')
    .option(...PROJECT_OPTION)
    .action(async (ref: string, options: { reason?: string; project?: string }) => {
      await withObjectives(context, options.project, async (api, projectId) => {
        const objective = await api.objectives.get(projectId, ref);
        context.out(describeWake(objective.id, await api.objectives.wake(projectId, objective.id, options.reason)));
      });
    });

  const policy = objectives.command('policy').description("an objective's delegation policies");
  policy
    .command('approve')
    .description('print a draft policy version, then approve it if --hash is its hash')
    .argument(...OBJECTIVE_ARGUMENT)
    .argument('<version>', 'the policy version, as POST …/policies answered it', positiveVersion)
    .requiredOption('--hash <hash>', 'the hash of the document you reviewed (sha256:…)')
    .option(...PROJECT_OPTION)
    .action(async (ref: string, version: number, options: { hash: string; project?: string }) => {
      await withObjectives(context, options.project, async (api, projectId) => {
        const { data } = await api.objectivePolicies.list(projectId, ref);
        const found = data.find((p) => p.version === version);
        if (!found) {
          const versions = data.map((p) => `${p.version} (${p.status})`).join(', ');
          throw new CliError(`Objective ${ref} has no policy version ${version}; ${versions ? `its versions: ${versions}` : 'it has no policy yet'}.`);
        }
        context.out(`Policy version ${found.version} of ${found.objective_id} (${found.status}, ${found.hash}):`);
        context.out(JSON.stringify(found.document, null, 2));
        const approved = await api.objectivePolicies.approve(projectId, found.objective_id, version, options.hash);
        const objective = await api.objectives.get(projectId, found.objective_id);
        context.out(`Approved policy version ${approved.version} of ${objective.id} (${approved.hash}); the objective is ${statusLine(objective)}.`);
      });
    });
}
