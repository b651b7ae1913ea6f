// The A2A wing's slice of the kernel API: the remote A2A agents a project's
// agents call as tools (`{type: "a2a", remote_agent}`). The A2A surface
// (adapters/a2a) receives it beside the KernelApi; nothing else does.
import type { CreateRemoteAgentRequest, RemoteAgent } from '../../../generated/schemas.js';
import type { CommandOptions, KernelApi, Page, PageRequest } from '../../api/kernel-api.js';
import type { RemoteAgentConnection } from './remote-agents.js';

export type { RemoteAgentConnection };

export interface A2aApi {
  remoteAgents: {
    /** Fetches the card through the egress guard; header values go to the secret store. */
    create(projectId: string, request: CreateRemoteAgentRequest, options?: CommandOptions): Promise<RemoteAgent>;
    get(projectId: string, ref: string): Promise<RemoteAgent>;
    list(projectId: string, page: PageRequest): Promise<Page<RemoteAgent>>;
    delete(projectId: string, ref: string): Promise<string>;
    /** The card and the headers' values, for the call that sends them (the A2A tool); never for an answer. */
    connection(projectId: string, ref: string): Promise<RemoteAgentConnection>;
  };
}

/** What the A2A surface is given. */
export type A2aSurfaceApi = KernelApi & A2aApi;
