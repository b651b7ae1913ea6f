// Admission: the response, its input items (and session items) and its
// `response.created` event commit in one transaction before any surface
// acknowledges; a NOTIFY in the same transaction wakes a worker.
import type { CreateResponseRequest } from '../../generated/schemas.js';
import { requireAgent } from '../agents/agents.js';
import { PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { appendEvent } from '../journal/journal.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { appendSessionItems, requireSession } from '../sessions/sessions.js';
import type { Db } from '../store/db.js';
import { normalizeInput } from './items.js';
import { requireResponse, responseView, type ResponseRow } from './responses.js';

export async function admitResponse(db: Db, projectId: string, request: CreateResponseRequest): Promise<ResponseRow> {
  return db.transaction(async (tx) => {
    const session = request.session_id ? await requireSession(tx, projectId, request.session_id) : null;
    const agent = await requireAgent(tx, projectId, request.model ?? session!.agent_id);
    if (session && agent.id !== session.agent_id) {
      throw new PalaiError('invalid-request', `Session ${session.id} belongs to agent "${session.agent}".`, {
        errors: [{ pointer: '/model', detail: `must name the session's agent "${session.agent}"` }],
      });
    }
    if (request.previous_response_id) await requireResponse(tx, projectId, request.previous_response_id);

    const id = newId('resp');
    const input = normalizeInput(request.input);
    await tx.query(
      `INSERT INTO responses (id, project_id, agent_id, agent_revision_id, session_id, previous_response_id, status,
         input, instructions, metadata, background)
       VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10)`,
      [
        id,
        projectId,
        agent.id,
        agent.revision_id,
        session?.id ?? null,
        request.previous_response_id ?? null,
        JSON.stringify(input),
        request.instructions ?? null,
        JSON.stringify(request.metadata ?? {}),
        request.background === true,
      ],
    );
    if (session) await appendSessionItems(tx, projectId, session.id, id, input);
    const row = await requireResponse(tx, projectId, id);
    await appendEvent(tx, { projectId, responseId: id, leaseToken: null }, 'response.created', { response: responseView(row) });
    await tx.query('SELECT pg_notify($1, $2)', [WORK_CHANNEL, id]);
    return row;
  });
}
