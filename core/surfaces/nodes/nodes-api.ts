// The nodes wing's slice of the kernel API: enrollment tokens, paired nodes and
// their invocation ledger (docs/nodes.md). The nodes surface (adapters/nodes:
// the REST resources, the WebSocket gateway, the `node` tool provider) receives
// it beside the KernelApi; nothing else does.
import type {
  ApproveNodeRequest,
  CreateNodeEnrollmentRequest,
  Node,
  NodeEnrollment,
  NodeEnrollmentCreated,
  NodeInvocation,
  NodeInvocationState,
  NodeState,
  RevokeNodeRequest,
} from '../../../generated/schemas.js';
import type { CommandOptions, KernelApi, Page, PageRequest } from '../../api/kernel-api.js';
import type { NodeCallsPort } from './node-calls-port.js';
import type { NodeGatewayPort } from './node-gateway-port.js';

export interface NodesApi {
  nodeEnrollments: {
    /** A token shown in this answer only; its SHA-256 is kept. */
    create(projectId: string, request: Partial<CreateNodeEnrollmentRequest>, options?: CommandOptions): Promise<NodeEnrollmentCreated>;
    /** Never with its token. */
    get(projectId: string, id: string): Promise<NodeEnrollment>;
    list(projectId: string, page: PageRequest): Promise<Page<NodeEnrollment>>;
    /** Idempotent; nodes it enrolled stay as they are. */
    revoke(projectId: string, id: string): Promise<NodeEnrollment>;
  };
  nodes: {
    list(projectId: string, query: PageRequest & { state?: NodeState; alias?: string }): Promise<Page<Node>>;
    /** By id or alias. */
    get(projectId: string, ref: string): Promise<Node>;
    /** Pairs the node (or approves its changed catalog) for commands of its advertised catalog; its connection is told. */
    approve(projectId: string, ref: string, request: ApproveNodeRequest): Promise<Node>;
    /** A pending node refused: revoked. */
    deny(projectId: string, ref: string): Promise<Node>;
    /** Revoked: its connection is dropped and its open invocations cancelled. */
    revoke(projectId: string, ref: string, request: RevokeNodeRequest): Promise<Node>;
    /** Newest first. */
    invocations(projectId: string, ref: string, page: PageRequest): Promise<Page<NodeInvocation>>;
    /** Nodes by state, across projects (for /metrics). */
    counts(): Promise<Partial<Record<NodeState, number>>>;
  };
  nodeInvocations: {
    get(projectId: string, id: string): Promise<NodeInvocation>;
    /** Not yet sent: never sent; sent: the node is asked to stop it. An ended one is returned as it is. */
    cancel(projectId: string, id: string): Promise<NodeInvocation>;
    /** The ledger by state, across projects (for /metrics). */
    counts(): Promise<Partial<Record<NodeInvocationState, number>>>;
  };
  /** What the WebSocket gateway records and reads (a node is known by its key, not a project key). */
  nodeGateway: NodeGatewayPort;
  /** What the `node` tool provider prepares and reads. */
  nodeCalls: NodeCallsPort;
}

/** What the nodes surface is given. */
export type NodesSurfaceApi = KernelApi & NodesApi;
