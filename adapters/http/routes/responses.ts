import type { CreateResponseRequest } from '../../../generated/schemas.js';
import { cancelResponse, decideApproval, submitInput, submitToolOutputs } from '../../../core/responses/actions.js';
import { admitResponse } from '../../../core/responses/admission.js';
import { requireResponse, responseView } from '../../../core/responses/responses.js';
import { waitUntilSettled } from '../../../core/responses/settle.js';
import type { Kernel } from '../../../core/kernel.js';
import type { Response } from 'express';
import type { OperationHandlers } from '../operations.js';
import { resumePoint, streamResponseEvents } from '../sse.js';

/** Waits (while the caller stays connected) until the response settles, then answers with it. */
async function answerWhenSettled(kernel: Kernel, res: Response, projectId: string, responseId: string, maxMs: number): Promise<void> {
  // The caller hanging up does not stop the run; it only stops our waiting.
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const settled = await waitUntilSettled(kernel, projectId, responseId, maxMs, gone.signal);
  res.json(responseView(settled));
}

export function responseHandlers(kernel: Kernel): OperationHandlers {
  const { db } = kernel;
  const syncWaitMs = kernel.config.syncWaitSeconds * 1000;
  const stream = (res: Response, responseId: string, after: number) => streamResponseEvents(kernel, res, responseId, after);
  return {
    createResponse: async (req, res, { projectId, body, idempotency, replay }) => {
      const request = body as CreateResponseRequest;
      const row = replay ? await requireResponse(db, projectId, replay.resourceId) : await admitResponse(db, projectId, request, idempotency);
      if (request.stream) return stream(res, row.id, -1);
      if (request.background) return void res.json(responseView(row));
      await answerWhenSettled(kernel, res, projectId, row.id, syncWaitMs);
    },
    getResponse: async (req, res, { projectId, params, query }) => {
      const row = await requireResponse(db, projectId, params.response_id);
      if (query.stream) return stream(res, row.id, resumePoint(req, query.starting_after));
      res.json(responseView(row));
    },
    getResponseEvents: async (req, res, { projectId, params, query }) => {
      const row = await requireResponse(db, projectId, params.response_id);
      await stream(res, row.id, resumePoint(req, query.starting_after));
    },
    cancelResponse: async (_req, res, { projectId, params, idempotency, replay }) => {
      if (!replay) await cancelResponse(db, projectId, params.response_id, idempotency);
      // A running response stops within one step; give it a moment so the answer is usually final.
      await answerWhenSettled(kernel, res, projectId, params.response_id, 5_000);
    },
    submitToolOutputs: async (_req, res, { projectId, params, body, idempotency, replay }) => {
      if (!replay) await submitToolOutputs(db, projectId, params.response_id, body, idempotency);
      await answerWhenSettled(kernel, res, projectId, params.response_id, syncWaitMs);
    },
    decideApproval: async (_req, res, { projectId, params, body, idempotency, replay }) => {
      if (!replay) await decideApproval(db, projectId, params.response_id, body, idempotency);
      await answerWhenSettled(kernel, res, projectId, params.response_id, syncWaitMs);
    },
    submitInput: async (_req, res, { projectId, params, body, idempotency, replay }) => {
      if (!replay) await submitInput(db, projectId, params.response_id, body, idempotency);
      await answerWhenSettled(kernel, res, projectId, params.response_id, syncWaitMs);
    },
  };
}
