// The kernel API: the commands and queries every surface needs, and the only
// way a surface (adapters/, bots/) reaches the kernel. It is typed from the
// generated schemas and knows no surface's shape: a response is the kernel's
// ResponseState, its events are kernel events; each surface maps them into its
// own vocabulary. Surfaces never see the store: everything here takes a project
// id (from `authenticate`) and answers for that project only.
import type {
  Agent,
  AgentRevision,
  ApprovalDecisionRequest,
  CreateAgentRequest,
  CreateModelConnectionRequest,
  CreateResponseRequest,
  InputItem,
  Item,
  Metadata,
  ModelConnection,
  CreateRemoteAgentRequest,
  RemoteAgent,
  Session,
  SubmitInputRequest,
  SubmitToolOutputsRequest,
  UpdateAgentRequest,
} from '../../generated/schemas.js';
import type { CreateQueueConsumerRequest, QueueConsumer, UpdateQueueConsumerRequest } from '../../generated/schemas.js';
import type { CreateSlackBotRequest, SlackBot, SlackThread, UpdateSlackBotRequest } from '../../generated/schemas.js';
import type {
  CreateWebhookEndpointRequest,
  ReplayWebhookDeliveriesRequest,
  RotateWebhookSecretRequest,
  UpdateWebhookEndpointRequest,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookReplay,
} from '../../generated/schemas.js';
import type { PalaiConfig } from '../config.js';
import type { EgressFetch } from '../egress/egress-port.js';
import type { SocketEgress } from '../egress/egress-port.js';
import type { DeliveryPageRequest as WebhookDeliveryPageRequest } from '../webhooks/deliveries.js';
import type { WebhookAttemptOutcome, WebhookAttemptReport, WebhookSigningTarget } from '../webhooks/webhook-port.js';
import type { Inbox, IdempotencyClaim } from '../idempotency/inbox-port.js';
import type { FeedCursor, JournalEntry, ResponseState } from '../journal/journal-port.js';
import type { FeedEntry } from '../journal/project-feed.js';
import type { Logger } from '../logger.js';
import type { McpSessions } from '../mcp-sessions/mcp-sessions-port.js';
import type { McpServerConnection, McpServers } from '../mcp-servers/mcp-servers-port.js';
import type { AdmissionOutcome, QueueConsumerConfig, QueueHealthReport, QueueMessage } from '../queue/queue-port.js';
import type { JobResult } from '../queue/results.js';
import type { DeliveryFilter, RedeliverOutcome } from '../outbox/deliveries.js';
import type { DeliveryInput, DeliveryRecord, OutboxSubscription, OutboxSubscriptionInput, StatusAnnouncement } from '../outbox/outbox-port.js';
import type { Metrics } from '../metrics.js';
import type { NewSession } from '../sessions/sessions.js';
import type { Page, PageRequest } from '../pagination.js';
import type { RemoteAgentConnection } from '../remote-agents/remote-agents.js';
import type { SecretRef } from '../secrets/secret-port.js';
import type { SlackAdmission, SlackBotConfig, SlackDecision, SlackDecisionOutcome, SlackMessage, SlackReplyJob, SlackReplySave } from '../slack-bots/slack-bots-port.js';
import type { ResponseStatus } from '../responses/status.js';

export type { McpServerConnection, NewSession, RemoteAgentConnection, SecretRef };
export type { FeedCursor, FeedEntry, IdempotencyClaim, JournalEntry, Page, PageRequest, ResponseState };

/** Who a valid API key speaks for. */
export interface Principal {
  projectId: string;
  keyId: string;
}

/** Options every command that changes something accepts. */
export interface CommandOptions {
  /** The caller's idempotency identity, reserved in the command's own transaction (see `inbox`). */
  idempotency?: IdempotencyClaim;
}

export interface AdmitOptions extends CommandOptions {
  /**
   * The caller waits for the answer: when this process runs a worker with a free
   * slot, the response is claimed with its admission and runs here at once
   * (it is then in_progress, not queued, when admit returns). Default false.
   */
  runHere?: boolean;
}

/** Narrows a response list; an unknown agent is `agent-not-found`. */
export interface ResponseListFilter {
  /** The agent's name or id. */
  agent?: string;
  sessionId?: string;
  /** One status, or any of several. */
  status?: ResponseStatus | readonly ResponseStatus[];
  /** Unix seconds, inclusive. */
  createdAfter?: number;
  createdBefore?: number;
  /** Unix seconds (fractions allowed): only responses whose status changed after it. */
  statusChangedAfter?: number;
}

export interface FollowOptions {
  /** Replay events with a sequence greater than this (-1: from the start). */
  after: number;
  signal?: AbortSignal;
}

export interface KernelApi {
  readonly config: PalaiConfig;
  readonly logger: Logger;
  /** The process's Prometheus metrics, for a surface's own figures (open streams, say). */
  readonly metrics: Metrics;
  /** Shutdown signals: stop taking work when `draining`, end streams when `closing`. */
  readonly lifecycle: { readonly draining: AbortSignal; readonly closing: AbortSignal };
  /** Inbound deduplication keyed by (project, source, key): Idempotency-Key, A2A messageId, queue message, Slack event_id. */
  readonly inbox: Inbox;

  authenticate(apiKey: string): Promise<Principal | null>;

  agents: {
    create(projectId: string, request: CreateAgentRequest, options?: CommandOptions): Promise<Agent>;
    get(projectId: string, ref: string): Promise<Agent>;
    list(projectId: string, page: PageRequest): Promise<Page<Agent>>;
    update(projectId: string, ref: string, request: UpdateAgentRequest, options?: CommandOptions): Promise<Agent>;
    revisions(projectId: string, ref: string, page: PageRequest): Promise<Page<AgentRevision>>;
    /**
     * The project an agent id (`agt_…`) belongs to, or null: for what a surface serves without a key
     * (a public A2A card). It answers across projects, so the surface must check the agent opted in.
     */
    projectOf(agentId: string): Promise<string | null>;
  };

  sessions: {
    /** Without `agent` the session is bound by its first response. */
    create(projectId: string, request: NewSession, options?: CommandOptions): Promise<Session>;
    get(projectId: string, sessionId: string): Promise<Session>;
    updateMetadata(projectId: string, sessionId: string, metadata: Metadata, options?: CommandOptions): Promise<Session>;
    delete(projectId: string, sessionId: string): Promise<void>;
    /** Oldest first, or newest first with `order: 'desc'`. */
    items(projectId: string, sessionId: string, page: PageRequest & { order?: 'asc' | 'desc' }): Promise<Page<Item>>;
    /** Adds items at the end, outside any response; answers with them as stored (one page). */
    addItems(projectId: string, sessionId: string, items: InputItem[], options?: CommandOptions): Promise<Page<Item>>;
    item(projectId: string, sessionId: string, itemId: string): Promise<Item>;
    deleteItem(projectId: string, sessionId: string, itemId: string): Promise<void>;
  };

  connections: {
    create(projectId: string, request: CreateModelConnectionRequest, options?: CommandOptions): Promise<ModelConnection>;
    get(projectId: string, ref: string): Promise<ModelConnection>;
    list(projectId: string, page: PageRequest): Promise<Page<ModelConnection>>;
    delete(projectId: string, ref: string): Promise<string>;
  };

  /** Remote A2A agents the project's agents call as tools (`{type: "a2a", remote_agent}`). */
  remoteAgents: {
    /** Fetches the card through the egress guard; header values go to the secret store. */
    create(projectId: string, request: CreateRemoteAgentRequest, options?: CommandOptions): Promise<RemoteAgent>;
    get(projectId: string, ref: string): Promise<RemoteAgent>;
    list(projectId: string, page: PageRequest): Promise<Page<RemoteAgent>>;
    delete(projectId: string, ref: string): Promise<string>;
    /** The card and the headers' values, for the call that sends them (the A2A tool); never for an answer. */
    connection(projectId: string, ref: string): Promise<RemoteAgentConnection>;
  };

  /**
   * MCP servers whose tools the project's agents use (`{type: "mcp", server_label}`): its own
   * Streamable HTTP servers and the operator's stdio servers (see core/mcp-servers/mcp-servers-port.ts).
   */
  mcpServers: McpServers;

  /**
   * The secret store, for a surface's own credentials (an A2A push config's token): store the
   * value once, keep the reference, reveal it only to send it. See core/secrets/secret-port.ts.
   */
  secrets: {
    put(projectId: string, purpose: string, plaintext: string): Promise<SecretRef>;
    reveal(projectId: string, secretId: string): Promise<string>;
    remove(projectId: string, secretId: string): Promise<boolean>;
  };

  responses: {
    /**
     * Admits a run: the response, its input and its `queued` event commit together before this returns.
     * A request continuing from a response that waits answers that response instead (its input holds
     * the answers, all applied or none) and returns it, resumed: no new response is made.
     */
    admit(projectId: string, request: CreateResponseRequest, options?: AdmitOptions): Promise<ResponseState>;
    get(projectId: string, responseId: string): Promise<ResponseState>;
    /** The project's responses matching `filter`, newest first unless `order` is `asc`. */
    list(projectId: string, filter: ResponseListFilter, page: PageRequest & { order?: 'asc' | 'desc' }): Promise<Page<ResponseState>>;
    /** How many of the project's responses match `filter`. */
    count(projectId: string, filter: ResponseListFilter): Promise<number>;
    /** Deletes the response and its journal; a running one is interrupted. Its session keeps the items it added. */
    delete(projectId: string, responseId: string): Promise<void>;
    /** The items the response was given as input, in order, as stored (each with its id). */
    inputItems(projectId: string, responseId: string): Promise<Item[]>;
    /** Idempotent: a response nobody runs ends canceled at once; a running one stops within one step. */
    cancel(projectId: string, responseId: string, options?: CommandOptions): Promise<ResponseState>;
    submitToolOutputs(projectId: string, responseId: string, request: SubmitToolOutputsRequest, options?: CommandOptions): Promise<ResponseState>;
    decideApproval(projectId: string, responseId: string, request: ApprovalDecisionRequest, options?: CommandOptions): Promise<ResponseState>;
    submitInput(projectId: string, responseId: string, request: SubmitInputRequest, options?: CommandOptions): Promise<ResponseState>;
    /** Until the response ends or waits for someone, `timeoutMs` passes or `signal` aborts; then its state. */
    waitUntilSettled(projectId: string, responseId: string, timeoutMs: number, signal?: AbortSignal): Promise<ResponseState>;
    /** The response's journal from `after`, then live; ends after the terminal event or a trailing wait. */
    follow(projectId: string, responseId: string, options: FollowOptions): AsyncGenerator<JournalEntry>;
    /** The response waiting for the outputs of all these client calls (by call id alone), or null. */
    awaitingOutputs(projectId: string, callIds: string[]): Promise<ResponseState | null>;
    /** The sequence of the response's latest journaled event (-1 before its first). */
    lastSequence(projectId: string, responseId: string): Promise<number>;
    /** Journaled events after `after`, at most `limit`. */
    events(projectId: string, responseId: string, after: number, limit?: number): Promise<JournalEntry[]>;
  };

  /**
   * Durable outbound deliveries (see core/outbox/outbox-port.ts). A surface
   * subscribes its targets to response statuses, or enqueues a delivery of its
   * own; its OutboxConsumer, registered by the composition root, carries them out.
   */
  outbox: {
    /**
     * Announce these statuses to this target from now on, each in the transaction of its status change.
     * With a response id: every change that commits after this returns is announced, and a read of the
     * status after it sees every change that is not.
     */
    subscribe(input: OutboxSubscriptionInput): Promise<string>;
    /** False when the project has no such subscription. Deliveries already written are still carried out. */
    unsubscribe(projectId: string, subscriptionId: string): Promise<boolean>;
    subscriptions(projectId: string, filter?: { consumer?: string; target?: string }): Promise<OutboxSubscription[]>;
    /** A delivery of the surface's own, committed before this returns. */
    enqueue(input: DeliveryInput): Promise<string>;
    /** The project's deliveries, newest first. */
    deliveries(projectId: string, filter: Omit<DeliveryFilter, 'projectId'>): Promise<DeliveryRecord[]>;
    delivery(projectId: string, deliveryId: string): Promise<DeliveryRecord | null>;
    /** Puts a delivered or dead delivery back to pending, due now, same id. */
    redeliver(projectId: string, deliveryId: string): Promise<RedeliverOutcome>;
  };

  /** MCP sessions, held by the store so any process serves any session (see core/mcp-sessions/mcp-sessions-port.ts). */
  mcpSessions: McpSessions;

  /**
   * Queue consumers and job admission (core/queue/queue-port.ts): the kernel
   * keeps the consumers and admits jobs exactly once; the queue surface talks to the brokers.
   */
  queues: {
    create(projectId: string, request: CreateQueueConsumerRequest, options?: CommandOptions): Promise<QueueConsumer>;
    get(projectId: string, ref: string): Promise<QueueConsumer>;
    list(projectId: string, page: PageRequest): Promise<Page<QueueConsumer>>;
    update(projectId: string, ref: string, request: UpdateQueueConsumerRequest): Promise<QueueConsumer>;
    /** The consumer's id. */
    delete(projectId: string, ref: string): Promise<string>;
    /** Every consumer of every project that is not paused, credentials revealed: only for the processes that run them. */
    runnable(): Promise<QueueConsumerConfig[]>;
    /** One consumer, credentials revealed (to send a result); null when it is gone. */
    config(projectId: string, consumerId: string): Promise<QueueConsumerConfig | null>;
    /** Calls `listener` with a consumer's id whenever it is created, changed or deleted, in any process. */
    onChange(listener: (consumerId: string) => void): Promise<() => Promise<void>>;
    /** Makes a message a response exactly once; see AdmissionOutcome. */
    admit(consumer: QueueConsumerConfig, message: QueueMessage): Promise<AdmissionOutcome>;
    /** The result a `queue_reply` delivery announces; null when it can never be sent. */
    result(projectId: string, announcement: StatusAnnouncement): Promise<JobResult | null>;
    /** Responses admitted and not yet started, across the store: what backpressure watches. */
    backlog(): Promise<number>;
    /** What this process found running the consumer (see QueueHealthReport); call it on a change only. */
    reportHealth(consumer: QueueConsumerConfig, report: QueueHealthReport): Promise<void>;
  };

  /**
   * Slack bots (core/slack-bots/slack-bots-port.ts): the kernel keeps the bots,
   * admits their messages exactly once and builds the answers; the Slack surface
   * verifies Slack's requests and posts.
   */
  slackBots: {
    /** Tokens and the signing secret go to the secret store (PALAI_SECRET_KEY is required) and are never returned. */
    create(projectId: string, request: CreateSlackBotRequest, options?: CommandOptions): Promise<SlackBot>;
    get(projectId: string, ref: string): Promise<SlackBot>;
    list(projectId: string, page: PageRequest): Promise<Page<SlackBot>>;
    update(projectId: string, ref: string, request: UpdateSlackBotRequest): Promise<SlackBot>;
    /** The bot's id. */
    delete(projectId: string, ref: string): Promise<string>;
    /** The threads the bot has answered in, each with its session. */
    threads(projectId: string, ref: string, page: PageRequest): Promise<Page<SlackThread>>;
    /** A bot by id, across projects, secrets revealed: to verify a Slack request's signature, then to serve it. Null when gone. */
    config(botId: string): Promise<SlackBotConfig | null>;
    /** Makes a user's message a response exactly once (keyed by the message); see SlackAdmission. */
    admit(bot: SlackBotConfig, message: SlackMessage): Promise<SlackAdmission>;
    /** True when the bot has answered in this thread (a message there without a mention concerns it). */
    knowsThread(botId: string, message: Pick<SlackMessage, 'team' | 'channel' | 'threadTs'>): Promise<boolean>;
    /** Leases replies with journal events not yet in their thread to `owner` (a streamer). */
    claimReplies(owner: string, limit: number, leaseMs: number): Promise<SlackReplyJob[]>;
    /** Saves a reply's progress and renews (or gives back) its lease; false when `owner` lost it. */
    saveReply(responseId: string, owner: string, leaseMs: number, save: SlackReplySave): Promise<boolean>;
    /** Applies an approver's click on a prompt's button; see SlackDecisionOutcome. */
    decide(bot: SlackBotConfig, decision: SlackDecision): Promise<SlackDecisionOutcome>;
    /** Socket Mode: the ids of every bot in that mode, across projects. */
    socketBots(): Promise<string[]>;
    /** Takes or renews the cluster-wide lease on a bot's Socket Mode connection; false when another process holds it. */
    leaseSocket(botId: string, owner: string, ttlMs: number): Promise<boolean>;
    releaseSocket(botId: string, owner: string): Promise<void>;
  };

  /**
   * Webhook endpoints (core/webhooks/webhook-port.ts): the kernel keeps them as
   * outbox subscriptions of the `webhook` consumer; the webhook surface signs and sends.
   */
  webhooks: {
    /** The answer carries the signing secret, the only time it is shown. Needs PALAI_SECRET_KEY. */
    create(projectId: string, request: CreateWebhookEndpointRequest, options?: CommandOptions): Promise<WebhookEndpoint>;
    get(projectId: string, endpointId: string): Promise<WebhookEndpoint>;
    list(projectId: string, page: PageRequest): Promise<Page<WebhookEndpoint>>;
    update(projectId: string, endpointId: string, request: UpdateWebhookEndpointRequest): Promise<WebhookEndpoint>;
    delete(projectId: string, endpointId: string): Promise<string>;
    /** A new secret (in the answer); the old one keeps signing until the overlap ends. */
    rotateSecret(projectId: string, endpointId: string, request?: Partial<RotateWebhookSecretRequest>): Promise<WebhookEndpoint>;
    /** The endpoint's deliveries, newest first, each with its attempts. */
    deliveries(projectId: string, endpointId: string, page: WebhookDeliveryPageRequest): Promise<Page<WebhookDelivery>>;
    delivery(projectId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery>;
    resend(projectId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery>;
    replay(projectId: string, endpointId: string, request: ReplayWebhookDeliveriesRequest): Promise<WebhookReplay>;
    test(projectId: string, endpointId: string): Promise<WebhookDelivery>;
    /** For the surface's attempt: the URL and the secrets to sign with; null when the endpoint is gone. */
    signingTarget(projectId: string, endpointId: string): Promise<WebhookSigningTarget | null>;
    /** Records an attempt; may disable an endpoint failing for too long. */
    recordAttempt(report: WebhookAttemptReport): Promise<WebhookAttemptOutcome>;
    /** Disables the endpoint (a 410 from its receiver), the reason shown on it. */
    disable(projectId: string, endpointId: string, reason: string): Promise<boolean>;
  };

  /** The egress guard's fetch: every outbound HTTP call a surface makes goes through it (never follows redirects). */
  readonly egress: EgressFetch;
  /** The same guard for clients that open their own sockets (Kafka, the AWS SDK): connect with `connectOptions(host)`. */
  readonly egressSockets: SocketEgress;

  journal: {
    /** Every event of the project after `after` (FEED_START: from the beginning), in commit order, then live. */
    follow(projectId: string, options: { after: FeedCursor; signal?: AbortSignal }): AsyncGenerator<FeedEntry>;
    /** The cursor that follows only events journaled from now on. */
    latest(projectId: string): Promise<FeedCursor>;
  };

  operator: {
    /** Throws a PalaiError (`not-ready`) when the store is out of reach or migrations are pending. */
    readiness(): Promise<{ store: string; migrations: number }>;
    metrics(): Promise<{ contentType: string; body: string }>;
  };
}
