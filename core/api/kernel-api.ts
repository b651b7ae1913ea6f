// The kernel API: the commands and queries every surface needs, and the only
// way a surface (adapters/, bots/) reaches the kernel. It is typed from the
// generated schemas and knows no surface's shape: a response is the kernel's
// ResponseState, its events are kernel events; each surface maps them into its
// own vocabulary. Surfaces never see the store: everything here takes a project
// id (from `authenticate`) and answers for that project only. What only one
// surface needs (its own resources, its admission) is that surface's slice, in
// its wing (core/surfaces/<name>/<name>-api.ts), given to it beside this.
import type {
  Agent,
  AgentRevision,
  ApprovalDecisionRequest,
  CreateAgentRequest,
  CreateModelConnectionRequest,
  CreateSecretRequest,
  InputItem,
  Item,
  Metadata,
  ModelConnection,
  Secret,
  SecretList,
  Session,
  SubmitInputRequest,
  SubmitToolOutputsRequest,
  UpdateAgentRequest,
} from '../../generated/schemas.js';
import type { AdmissionCommand } from '../../generated/protocol-schemas.js';
import type { RecalledKey } from '../auth/recalled-keys.js';
import type { PalaiConfig } from '../config.js';
import type { EgressFetch } from '../egress/egress-port.js';
import type { SocketEgress } from '../egress/egress-port.js';
import type { Inbox, IdempotencyClaim } from '../idempotency/inbox-port.js';
import type { LeaseGrant, Leases, LeaseTenure } from '../leases/lease-port.js';
import type { Signals } from '../signals/signal-port.js';
import type { ParkedCallAnswer } from '../tools/answer-parked-call.js';
import type { FeedCursor, JournalEntry, ResponseState } from '../journal/journal-port.js';
import type { FeedEntry } from '../journal/project-feed.js';
import type { Logger } from '../logger.js';
import type { DeliveryFilter, RedeliverOutcome } from '../outbox/deliveries.js';
import type { DeliveryInput, DeliveryRecord, OutboxSubscription, OutboxSubscriptionInput } from '../outbox/outbox-port.js';
import type { Metrics } from '../metrics.js';
import type { NewSession } from '../sessions/sessions.js';
import type { Page, PageRequest } from '../pagination.js';
import type { SecretRef } from '../secrets/secret-port.js';
import type { ResponseStatus } from '../response-status.js';

export type { AdmissionCommand, RecalledKey, LeaseGrant, LeaseTenure, NewSession, ParkedCallAnswer, SecretRef };
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
  /**
   * The caller's key as `recallKey` gave it, not yet checked: admission checks
   * it in its first statement (unauthorized, with nothing written, unless it is
   * still live) and marks it checked.
   */
  key?: RecalledKey;
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
  /**
   * A key this process has authenticated before, at the project it was found
   * under, still to be checked (by admission's first statement, given as
   * `AdmitOptions.key`, or by `checkKey`); null: authenticate it. Answers at once.
   */
  recallKey(apiKey: string): RecalledKey | null;
  /** Checks a recalled key against the live key table, unless done: unauthorized if it is revoked or gone. */
  checkKey(key: RecalledKey): Promise<void>;

  agents: {
    create(projectId: string, request: CreateAgentRequest, options?: CommandOptions): Promise<Agent>;
    get(projectId: string, ref: string): Promise<Agent>;
    list(projectId: string, page: PageRequest): Promise<Page<Agent>>;
    update(projectId: string, ref: string, request: UpdateAgentRequest, options?: CommandOptions): Promise<Agent>;
    revisions(projectId: string, ref: string, page: PageRequest): Promise<Page<AgentRevision>>;
    /** One revision of any of the project's agents by its id (a response's `agent.revision_id`), or not-found. */
    revision(projectId: string, revisionId: string): Promise<AgentRevision>;
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

  /**
   * The secret store, for a surface's own credentials (an A2A push config's token): store the
   * value once, keep the reference, reveal it only to send it. See core/secrets/secret-port.ts.
   */
  secrets: {
    put(projectId: string, purpose: string, plaintext: string): Promise<SecretRef>;
    reveal(projectId: string, secretId: string): Promise<string>;
    remove(projectId: string, secretId: string): Promise<boolean>;
  };

  /** Named project secrets (POST /v1/secrets): for node commands' environments; the value is never answered. */
  projectSecrets: {
    create(projectId: string, request: CreateSecretRequest): Promise<Secret>;
    list(projectId: string): Promise<SecretList>;
    /** By id or name; answers the id. */
    delete(projectId: string, ref: string): Promise<string>;
  };

  responses: {
    /**
     * Admits a run: the response, its input, the session it makes (a new one, or the one a key maps
     * to) and its `queued` event commit together before this returns. The command
     * (protocols/admission.schema.json) is checked first: one that does not match is
     * `validation-failed`, naming each field by its pointer into the command. A command continuing
     * from a response that waits answers that response instead (its input holds the answers, all
     * applied or none) and returns it, resumed: no new response is made.
     */
    admit(projectId: string, command: AdmissionCommand, options?: AdmitOptions): Promise<ResponseState>;
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
    /**
     * An outside party's answer to a call its tool parked (core/tools/parked-calls.ts): the call's
     * output, committed with the caller's inbox claim; the response runs on. The same answer again
     * changes nothing; another one is `idempotency-conflict`; one after the call's deadline is `invalid-state`.
     */
    answerParkedCall(projectId: string, responseId: string, callId: string, answer: ParkedCallAnswer, options?: CommandOptions): Promise<ResponseState>;
    /** Until the response ends or waits for someone, `timeoutMs` passes or `signal` aborts; then its state. */
    waitUntilSettled(projectId: string, responseId: string, timeoutMs: number, signal?: AbortSignal): Promise<ResponseState>;
    /** The response's journal from `after`, then live; ends after the terminal event or a trailing wait. */
    follow(projectId: string, responseId: string, options: FollowOptions): AsyncGenerator<JournalEntry>;
    /**
     * The waiting response admitting `command` would answer (it resumes, and no new response is made), or
     * null: the response `previous_response_id` names, one whose pending client calls the input's trailing
     * `function_call_output` items answer (same agent and session), or, for an empty input in a session, its
     * latest response once the session holds the outputs it waits for. Admission decides again, under its lock.
     * A recalled `key` is checked before anything is read (a command that answers nothing reads nothing).
     */
    answering(projectId: string, command: AdmissionCommand, key?: RecalledKey): Promise<ResponseState | null>;
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
    redeliver(projectId: string, deliveryId: string, options?: CommandOptions): Promise<RedeliverOutcome>;
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

  /**
   * Cluster leases by key, with fencing tokens: one holder at a time across every process
   * (see core/leases/lease-port.ts). Keys are global, not per project: prefix them with your wing.
   */
  leases: Leases;

  /** Hints to this surface's processes elsewhere, by name, over the store (see core/signals/signal-port.ts); may be lost, so poll too. */
  signals: Signals;

  operator: {
    /** Throws a PalaiError (`not-ready`) when the store is out of reach or migrations are pending. */
    readiness(): Promise<{ store: string; migrations: number }>;
    metrics(): Promise<{ contentType: string; body: string }>;
  };
}
