// The Slack streamer: projects answers into their threads from the journal.
// It claims replies that have events not yet in their thread (a lease per
// reply, so one process writes each message), replays the response's journal
// from the start to rebuild the answer's segments, and posts what its saved
// progress has not: live while the response runs, text flushed at most once a
// second (Slack's streaming methods allow about one call a second per message).
// A reply whose response waits for someone gives its lease back and is claimed
// again when the response moves; one whose response ended and is all posted is
// finished. A bot that cannot post (deleted, token revoked, not in the channel)
// ends the reply with the reason kept on it, never a token.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSettled, type JournalEntry } from '../../core/api/index.js';
import type { SlackSurfaceApi } from '../../core/surfaces/slack/slack-api.js';
import type { SlackReplyJob, SlackReplySave } from '../../core/surfaces/slack/slack-bots-port.js';
import { answerOf } from './answer.js';
import type { WebClient } from '@slack/web-api';
import type { ThreadProjection } from './projection.js';
import { SlackCallError } from './slack-call-error.js';

export interface StreamerOptions {
  /** How long a reply stays leased without a save (each Slack call saves, a heartbeat renews). */
  leaseMs?: number;
  pollMs?: number;
  /** Replies one process projects at once. */
  maxReplies?: number;
  /** Least time between two writes of new text into one message. */
  flushMs?: number;
}

class LeaseLost extends Error {}

/**
 * Messages this process admitted: its streamer claims them at once instead of at its next poll.
 * (Another process's admissions are found by the poll.)
 */
export const slackAdmissions = new EventTarget();

/** Transient failures are retried this many times in a row before the lease is given back for later. */
const MAX_TRANSIENT_ATTEMPTS = 5;

export class SlackStreamer {
  private readonly owner = `slack-${randomUUID()}`;
  private readonly replies = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly maxReplies: number;
  private readonly flushMs: number;
  private loop: Promise<void> | null = null;
  private readonly logger;

  constructor(
    private readonly api: SlackSurfaceApi,
    options: StreamerOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 10_000;
    this.pollMs = options.pollMs ?? api.config.pollIntervalMs;
    this.maxReplies = options.maxReplies ?? 50;
    this.flushMs = options.flushMs ?? 1_000;
    this.logger = api.logger.child({ component: 'slack-streamer' });
    // Each projection listens for stop() on this signal.
    setMaxListeners(this.maxReplies + 10, this.stopping.signal);
  }

  start(): void {
    slackAdmissions.addEventListener('admitted', this.wake);
    this.loop ??= this.poll();
  }

  private wakeNow: (() => void) | null = null;
  private readonly wake = () => this.wakeNow?.();

  /** Stops claiming, ends every projection (their leases are handed back) and waits for them. */
  async stop(): Promise<void> {
    slackAdmissions.removeEventListener('admitted', this.wake);
    this.stopping.abort();
    await this.loop;
    await Promise.allSettled(this.replies.values());
  }

  private async poll(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      const room = this.maxReplies - this.replies.size;
      if (room > 0) {
        const jobs = await this.api.slackBots.claimReplies(this.owner, room, this.leaseMs).catch((error: unknown) => {
          this.logger.warn({ err: error }, 'claiming Slack replies failed');
          return [];
        });
        for (const job of jobs) {
          const run = this.project(job).finally(() => this.replies.delete(job.responseId));
          this.replies.set(job.responseId, run);
        }
      }
      await this.nap(signal);
    }
  }

  /** The poll's pause, cut short by a local admission or by stop(). */
  private nap(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wakeNow = null;
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      this.wakeNow = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private async project(job: SlackReplyJob): Promise<void> {
    const abort = new AbortController();
    const signal = AbortSignal.any([abort.signal, this.stopping.signal]);
    let save = async (update: SlackReplySave) => {
      if (!(await this.api.slackBots.saveReply(job.responseId, this.owner, this.leaseMs, update))) throw new LeaseLost();
    };
    const bot = await this.api.slackBots.config(job.botId).catch(() => undefined);
    if (bot === undefined) return void (await save({ progress: job.progress, release: true }).catch(() => undefined));
    if (bot === null || bot.projectId !== job.projectId) {
      return void (await save({ progress: job.progress, finished: true, error: `Slack bot ${job.botId} was deleted; the answer has nowhere to go` }).catch(
        () => undefined,
      ));
    }
    // Loaded with the first reply: a hub that never answers in Slack never loads the Web API client.
    const [{ ThreadProjection }, { slackWebClient }] = await Promise.all([import('./projection.js'), import('./web-client.js')]);
    const client = slackWebClient(this.api, bot);
    const projection = new ThreadProjection(client, job, (update) => save(update), signal);
    const heartbeat = setInterval(
      () => {
        // The lease alone: progress is only ever written by the projection, in order.
        save({}).catch(() => abort.abort());
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    try {
      if (job.projectedSequence === -1 && job.progress.segment === 0 && !job.progress.ts) await this.thinking(client, job);
      const entries: JournalEntry[] = [];
      let lastFlush = 0;
      let failures = 0;
      const flush = async () => {
        for (;;) {
          try {
            await projection.sync(answerOf(entries));
            failures = 0;
            return;
          } catch (error) {
            if (!(error instanceof SlackCallError) || error.kind === 'permanent' || ++failures >= MAX_TRANSIENT_ATTEMPTS) throw error;
            await sleep(500 * 2 ** failures, undefined, { signal });
          }
        }
      };
      for await (const entry of this.api.responses.follow(job.projectId, job.responseId, { after: -1, signal })) {
        entries.push(entry);
        const ends = entry.event.type === 'status' && isSettled(entry.event.status);
        if (entry.sequence <= job.projectedSequence) continue;
        if (ends || Date.now() - lastFlush >= this.flushMs) {
          await flush();
          lastFlush = Date.now();
        }
      }
      signal.throwIfAborted();
      await flush();
      const answer = answerOf(entries);
      const last = entries.at(-1)?.sequence ?? job.projectedSequence;
      await save({ progress: projection.progress, projectedSequence: last, finished: answer.done, release: !answer.done });
    } catch (error) {
      await this.giveUp(job, projection, error, save);
    } finally {
      clearInterval(heartbeat);
      save = async () => undefined;
    }
  }

  /** Ends a projection that cannot go on: a permanent refusal finishes the reply, anything else hands it back for later. */
  private async giveUp(job: SlackReplyJob, projection: ThreadProjection, error: unknown, save: (update: SlackReplySave) => Promise<void>): Promise<void> {
    if (error instanceof LeaseLost) return;
    const permanent = error instanceof SlackCallError && error.kind === 'permanent';
    const line = error instanceof SlackCallError ? error.message : this.stopping.signal.aborted ? null : 'projecting the answer failed';
    if (!this.stopping.signal.aborted)
      this.logger.warn(
        { response: job.responseId, bot: job.botId, problem: line, err: error instanceof SlackCallError ? undefined : error },
        'a Slack reply stopped',
      );
    await save({ progress: projection.progress, ...(permanent ? { finished: true } : { release: true }), ...(line ? { error: line } : {}) }).catch(
      () => undefined,
    );
  }

  /** The assistant's "thinking…" status under the thread; only Slack's AI-app threads show it, so a refusal is fine. */
  private async thinking(client: WebClient, job: SlackReplyJob): Promise<void> {
    await client.assistant.threads.setStatus({ channel_id: job.channel, thread_ts: job.threadTs, status: 'is thinking…' }).catch(() => undefined);
  }
}
