// The Slack wing's slice of the kernel API: the kernel keeps the bots, admits
// their messages exactly once and builds the answers (see slack-bots-port.ts);
// the Slack surface (bots/slack) verifies Slack's requests and posts. It
// receives this beside the KernelApi.
import type { CreateSlackBotRequest, SlackBot, SlackThread, UpdateSlackBotRequest } from '../../../generated/schemas.js';
import type { CommandOptions, KernelApi, Page, PageRequest } from '../../api/kernel-api.js';
import type { LeaseGrant, LeaseTenure } from '../../leases/lease-port.js';
import type { SlackAdmission, SlackBotConfig, SlackDecision, SlackDecisionOutcome, SlackMessage, SlackReplyJob, SlackReplySave } from './slack-bots-port.js';

export interface SlackApi {
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
    /**
     * Takes the cluster lease on a bot's Socket Mode connection for `owner`, or renews `held`, the
     * tenure this process has (core/leases/lease-port.ts); null when another process holds it.
     */
    leaseSocket(botId: string, owner: string, ttlMs: number, held?: LeaseTenure | null): Promise<LeaseGrant | null>;
    /** Hands the tenure back, so another process connects at once. */
    releaseSocket(botId: string, tenure: LeaseTenure): Promise<void>;
  };
}

/** What the Slack surface is given. */
export type SlackSurfaceApi = KernelApi & SlackApi;
