import type { CreateResponseRequest } from '../../../generated/schemas.js';
import { cancelResponse, decideApproval, submitInput, submitToolOutputs } from '../../../core/responses/actions.js';
import { admitResponse } from '../../../core/responses/admission.js';
import { requireResponse, responseView } from '../../../core/responses/responses.js';
import { waitUntilSettled } from '../../../core/responses/settle.js';
import { isTerminal, isWaiting } from '../../../core/responses/status.js';
import { PalaiError } from '../../../core/errors/palai-error.js';
import { isTransientStoreError } from '../../../core/store/transient.js';
import type { Kernel } from '../../../core/kernel.js';
import type { Response } from 'express';
import type { OperationHandlers } from '../operations.js';
import { resumePoint, streamResponseEvents } from '../sse.js';

/**
 * Waits (while the caller stays connected) until the response settles, then
 * answers with it. The response exists by now, so when the wait itself fails —
 * a database outage, this process shutting down — the answer is a 503 naming it:
 * the client fetches it later instead of sending the request again.
 */
async function answerWhenSettled(kernel: Kernel, res: Response, projectId: string, responseId: string, maxMs: number): Promise<void> {
  // The caller hanging up does not stop the run; it only stops our waiting.
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  const signal = AbortSignal.any([gone.signal, kernel.lifecycle.closing]);
  let settled;
  try {
    settled = await waitUntilSettled(kernel, projectId, responseId, maxMs, signal);
  } catch (error) {
    if (!isTransientStoreError(error)) throw error;
    throw new PalaiError('store-unavailable', `Response ${responseId} was accepted and goes on, but the database cannot be reached right now; fetch it with GET /v1/responses/${responseId} shortly.`, {
      extensions: { response_id: responseId },
    });
  }
  if (kernel.lifecycle.closing.aborted && !isTerminal(settled.status) && !isWaiting(settled.status)) {
    throw new PalaiError('shutting-down', `This process is shutting down; response ${responseId} goes on in another one. Fetch it with GET /v1/responses/${responseId}.`, {
      extensions: { response_id: responseId },
    });
  }
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
      if (query.stream) return stream(res, row.id, await resumePoint(kernel, req, row.id, query.starting_after));
      res.json(responseView(row));
    },
    getResponseEvents: async (req, res, { projectId, params, query }) => {
      const row = await requireResponse(db, projectId, params.response_id);
      await stream(res, row.id, await resumePoint(kernel, req, row.id, query.starting_after));
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
