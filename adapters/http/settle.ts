// Waiting (while the caller stays connected) for an admitted response to settle,
// for the endpoints that answer synchronously. The response exists by now, so
// when the wait itself fails — a database outage, this process shutting down —
// the answer is a 503 naming it: the client fetches it later instead of sending
// the request again.
import type { Response } from 'express';
import { isSettled, type KernelApi, type ResponseState } from '../../core/api/index.js';
import { isPalaiError, PalaiError } from '../../core/errors/palai-error.js';

export async function settled(api: KernelApi, res: Response, projectId: string, responseId: string, maxMs: number): Promise<ResponseState> {
  // The caller hanging up does not stop the run; it only stops our waiting.
  const gone = new AbortController();
  const onClose = () => gone.abort();
  res.on('close', onClose);
  const signal = AbortSignal.any([gone.signal, api.lifecycle.closing]);
  let state: ResponseState;
  try {
    state = await api.responses.waitUntilSettled(projectId, responseId, maxMs, signal);
  } catch (error) {
    if (!isPalaiError(error) || error.slug !== 'store-unavailable') throw error;
    throw new PalaiError(
      'store-unavailable',
      `Response ${responseId} was accepted and goes on, but the database cannot be reached right now; fetch it with GET /v1/responses/${responseId} shortly.`,
      {
        extensions: { response_id: responseId },
      },
    );
  } finally {
    // Every answer closes the connection's response: nothing is left to stop by then.
    res.off('close', onClose);
  }
  if (api.lifecycle.closing.aborted && !isSettled(state.status)) {
    throw new PalaiError(
      'shutting-down',
      `This process is shutting down; response ${responseId} goes on in another one. Fetch it with GET /v1/responses/${responseId}.`,
      {
        extensions: { response_id: responseId },
      },
    );
  }
  return state;
}
