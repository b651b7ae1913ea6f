// Who an A2A call speaks for: the project of the API key, the agent named in
// the path, and a signal that aborts when the caller hangs up or the process
// closes. The SDK's transports carry it to the request handler as the call
// context's user, so every operation is scoped to one project's one agent.
import type { ServerCallContext, User } from '@a2a-js/sdk/server';
import type { Agent } from '../../generated/schemas.js';
import type { ServiceUnavailableError } from './errors.js';

export class Caller implements User {
  /** The outage the call failed on, if it did: the router answers it with HTTP 503, which the SDK's transports cannot. */
  unavailable: ServiceUnavailableError | null = null;

  constructor(
    readonly projectId: string,
    readonly agent: Agent,
    /** Ends waits and streams: the connection closed or the process is closing. */
    readonly signal: AbortSignal,
  ) {}

  get isAuthenticated(): boolean {
    return true;
  }

  get userName(): string {
    return this.projectId;
  }
}

/** The caller the router put on the request; its absence is a wiring bug, not a client's mistake. */
export function callerOf(context: ServerCallContext): Caller {
  const user = context.user;
  if (!(user instanceof Caller)) throw new Error('A2A call without a Palai caller: the router must authenticate before the SDK handler runs');
  return user;
}
