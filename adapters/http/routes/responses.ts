import type { CreateResponseRequest } from '../../../generated/schemas.js';
import { admitResponse } from '../../../core/responses/admission.js';
import { requireResponse, responseView } from '../../../core/responses/responses.js';
import { waitUntilSettled } from '../../../core/responses/settle.js';
import type { Kernel } from '../../../core/kernel.js';
import type { OperationHandlers } from '../operations.js';
import { resumePoint, streamResponseEvents } from '../sse.js';

export function responseHandlers(kernel: Kernel): OperationHandlers {
  const { db } = kernel;
  return {
    createResponse: async (req, res, { projectId, body }) => {
      const request = body as CreateResponseRequest;
      const row = await admitResponse(db, projectId, request);
      if (request.stream) return streamResponseEvents(kernel, req, res, row.id, -1);
      if (request.background) return void res.json(responseView(row));
      // The caller hanging up does not stop the run; it only stops our waiting.
      const gone = new AbortController();
      res.on('close', () => gone.abort());
      const settled = await waitUntilSettled(kernel, projectId, row.id, kernel.config.syncWaitSeconds * 1000, gone.signal);
      res.json(responseView(settled));
    },
    getResponse: async (req, res, { projectId, params, query }) => {
      const row = await requireResponse(db, projectId, params.response_id);
      if (query.stream) return streamResponseEvents(kernel, req, res, row.id, resumePoint(req, query.starting_after));
      res.json(responseView(row));
    },
  };
}
