// Reading responses and projecting a row to the OpenAI-shaped Response object.
import type { Item, Response, ResponseError, ResponseStatus, Usage } from '../../generated/schemas.js';
import { notFound } from '../errors/palai-error.js';
import { unixSeconds } from '../json.js';
import type { Queryable } from '../store/db.js';
import { outputText } from './items.js';

export interface ResponseRow {
  id: string;
  project_id: string;
  agent_id: string;
  agent_name: string;
  agent_revision_id: string;
  agent_revision: number;
  session_id: string | null;
  previous_response_id: string | null;
  status: ResponseStatus;
  input: Item[];
  instructions: string | null;
  metadata: Record<string, string>;
  background: boolean;
  output: Item[];
  usage: Usage | null;
  error: ResponseError | null;
  model_calls: number;
  lease_token: number;
  created_at: Date;
  completed_at: Date | null;
}

const SELECT_RESPONSE = `SELECT r.id, r.project_id, r.agent_id, a.name AS agent_name, r.agent_revision_id,
  rev.revision AS agent_revision, r.session_id, r.previous_response_id, r.status, r.input, r.instructions,
  r.metadata, r.background, r.output, r.usage, r.error, r.model_calls, r.lease_token, r.created_at, r.completed_at
  FROM responses r JOIN agents a ON a.id = r.agent_id JOIN agent_revisions rev ON rev.id = r.agent_revision_id`;

export async function findResponse(db: Queryable, projectId: string, responseId: string): Promise<ResponseRow | null> {
  const { rows } = await db.query<ResponseRow>(`${SELECT_RESPONSE} WHERE r.project_id = $1 AND r.id = $2`, [projectId, responseId]);
  return rows[0] ?? null;
}

export async function requireResponse(db: Queryable, projectId: string, responseId: string): Promise<ResponseRow> {
  const row = await findResponse(db, projectId, responseId);
  if (!row) throw notFound('response', responseId);
  return row;
}

export function responseView(row: ResponseRow): Response {
  return {
    id: row.id,
    object: 'response',
    created_at: unixSeconds(row.created_at)!,
    completed_at: unixSeconds(row.completed_at),
    status: row.status,
    model: row.agent_name,
    agent: { id: row.agent_id, name: row.agent_name, revision: row.agent_revision, revision_id: row.agent_revision_id },
    session_id: row.session_id,
    previous_response_id: row.previous_response_id,
    instructions: row.instructions,
    background: row.background,
    output: row.output,
    output_text: outputText(row.output),
    usage: row.usage,
    error: row.error,
    incomplete_details: null,
    metadata: row.metadata,
    tools: [],
    parallel_tool_calls: true,
    tool_choice: 'auto',
  };
}
