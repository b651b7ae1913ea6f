// What every answer to a hostile request must be (invariant 7): below 500, a
// problem+json from the registry when refused, what the document declares when
// accepted, no stack trace; and a refused request leaves the store as it was.
import assert from 'node:assert/strict';
import type { Response } from 'supertest';
import { httpStatusOf } from '../../../adapters/http/problem.js';
import { matchesSchema } from '../../../adapters/http/validation.js';
import { PROBLEM_TYPE_PREFIX, problemTypes } from '../../../core/errors/problem-types.js';
import type { Db } from '../../../core/store/db.js';
import type { OperationDescriptor } from '../../../generated/operations.js';
import { assertMatchesSpec } from '../spec.js';
import { parseSse } from '../sse.js';
import type { Answer } from './wire.js';

/** A stack frame, escaped in JSON or not: `at fn (/path/file.ts:1:2)`, or a node: internal. */
const STACK_TRACE = /\bat \S+ \((?:\/|file:|node:)|node:internal|\.[cm]?[jt]s:\d+:\d+\)/;

/** A refused request's answer: a problem of the registry, at its own status. */
export function assertProblemAnswer(answer: Pick<Answer, 'status' | 'headers' | 'text' | 'body'>, what: string): void {
  assert.match(
    String(answer.headers['content-type']),
    /^application\/problem\+json/,
    `${what}: a ${answer.status} that is not a problem: ${answer.text.slice(0, 300)}`,
  );
  const shape = matchesSchema('Problem', answer.body);
  assert.ok(shape.ok, `${what}: problem body does not match the schema: ${JSON.stringify(shape.errors)}\n${answer.text.slice(0, 300)}`);
  const slug = String(answer.body.type).slice(PROBLEM_TYPE_PREFIX.length) as keyof typeof problemTypes;
  assert.ok(
    String(answer.body.type).startsWith(PROBLEM_TYPE_PREFIX) && slug in problemTypes,
    `${what}: problem type ${answer.body.type} is not in the registry`,
  );
  assert.equal(answer.body.status, answer.status, `${what}: the problem's status differs from the HTTP status`);
  assert.equal(httpStatusOf(slug), answer.status, `${what}: ${slug} is mapped to HTTP status ${httpStatusOf(slug)}`);
  assert.ok(!STACK_TRACE.test(answer.text), `${what}: a stack trace leaked: ${answer.text.slice(0, 300)}`);
}

/** Every answer of the fuzz: never a 5xx, a problem when refused, the document's shape when accepted. */
export function assertAnswer(op: OperationDescriptor, answer: Answer): void {
  const what = `${op.method} ${op.path} (${op.operationId})`;
  assert.ok(answer.status < 500, `${what} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  if (answer.status >= 400) assertProblemAnswer(answer, what);
  if (String(answer.headers['content-type']).startsWith('text/event-stream')) {
    assert.equal(answer.status, 200, `${what}: an event stream with status ${answer.status}`);
    // Every frame that arrived is whole JSON (parseSse throws otherwise), and carries a type.
    for (const frame of parseSse(answer.text.slice(0, answer.text.lastIndexOf('\n\n') + 2)))
      assert.equal(typeof frame.data.type, 'string', `${what}: ${JSON.stringify(frame)}`);
    return;
  }
  assertMatchesSpec(answer as unknown as Response, op.operationId);
}

const TABLES = [
  'agents',
  'agent_revisions',
  'sessions',
  'session_items',
  'responses',
  'response_events',
  'tool_calls',
  'idempotency_keys',
  'model_connections',
  'node_enrollments',
  'nodes',
  'node_aliases',
  'node_invocations',
];

/**
 * The project's rows, summarised: counts per table, and digests of the columns an
 * update would change (agent revisions, response and tool-call states).
 */
export async function snapshot(db: Db, projectId: string): Promise<Record<string, unknown>> {
  const counts = TABLES.map((table) => `(SELECT count(*)::int FROM ${table} WHERE project_id = $1) AS ${table}`).join(', ');
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT ${counts},
       (SELECT md5(coalesce(string_agg(id || ':' || current_revision, ',' ORDER BY id), '')) FROM agents WHERE project_id = $1) AS agent_state,
       (SELECT md5(coalesce(string_agg(id || ':' || status || ':' || next_sequence, ',' ORDER BY id), '')) FROM responses WHERE project_id = $1) AS response_state,
       (SELECT md5(coalesce(string_agg(response_id || ':' || call_id || ':' || status, ',' ORDER BY response_id, call_id), '')) FROM tool_calls WHERE project_id = $1) AS tool_call_state,
       (SELECT md5(coalesce(string_agg(id || ':' || coalesce(revoked_at::text, '-') || ':' || coalesce(approved_at::text, '-') || ':' || array_to_string(allowed_commands, ',') || ':' || coalesce(display_name, '-'), ',' ORDER BY id), '')) FROM nodes WHERE project_id = $1) AS node_state,
       (SELECT md5(coalesce(string_agg(id || ':' || coalesce(revoked_at::text, '-') || ':' || uses, ',' ORDER BY id), '')) FROM node_enrollments WHERE project_id = $1) AS enrollment_state,
       (SELECT md5(coalesce(string_agg(alias || ':' || node_id, ',' ORDER BY alias), '')) FROM node_aliases WHERE project_id = $1) AS alias_state,
       (SELECT md5(coalesce(string_agg(id || ':' || state || ':' || coalesce(cancel_requested_at::text, '-'), ',' ORDER BY id), '')) FROM node_invocations WHERE project_id = $1) AS invocation_state`,
    [projectId],
  );
  return rows[0];
}

/** Waits until no response of the project is queued or running, so only the request under test can write. */
export async function settle(db: Db, projectId: string): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM responses WHERE project_id = $1 AND status IN ('queued', 'in_progress')`, [
      projectId,
    ]);
    if (rows[0].n === 0) return;
    // Said as it is, rather than a snapshot taken while they still write.
    if (Date.now() > deadline) throw new Error(`${rows[0].n} responses still queued or in progress after ${SETTLE_MS / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const SETTLE_MS = 60_000;
