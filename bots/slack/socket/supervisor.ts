// Runs the Socket Mode connections of the bots in that mode. Slack sends a
// bot's events to every connection its app opens, so one process in the
// cluster holds each bot's connection: the one holding the bot's lease (taken
// and renewed in the store). Every poll reads the bots in socket mode, takes
// the leases that are free or expired, renews its own, and connects; a bot
// deleted, moved to HTTP mode, or whose lease another process took is
// disconnected. Stopping (or the process beginning to drain) disconnects first,
// then hands the leases back, so another process connects while this one
// finishes its running work.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { LeaseGrant } from '../../../core/leases/lease-port.js';
import type { SlackSurfaceApi } from '../../../core/surfaces/slack/slack-api.js';
import { PalaiError } from '../../../core/errors/palai-error.js';
import type { Logger } from '../../../core/logger.js';
import type { SlackBotConfig } from '../../../core/surfaces/slack/slack-bots-port.js';
import type { SocketConnection } from './connection.js';

export interface SlackSocketSupervisorOptions {
  /** Only this bot: its id, or its name if no other bot in socket mode has it. Default: every bot in socket mode. */
  only?: string;
  /** How often the bots in socket mode are read; also the first pause after a failed connection. Default 5 s. */
  pollMs?: number;
  /** How long a lease lasts unless renewed; it is renewed after a third of that. Default 30 s. */
  leaseMs?: number;
  /** The longest pause between failed connection attempts. Default 5 min. */
  maxRetryMs?: number;
  /** Default: the kernel's logger. */
  logger?: Logger;
}

interface Held {
  connection: SocketConnection;
  /** This process's tenure of the bot's lease. */
  lease: LeaseGrant;
  /** When the last successful lease call was made: the lease runs at least until leaseMs after it. */
  leasedAt: number;
}

export class SlackSocketSupervisor {
  /** Who holds the leases: this supervisor, named so an operator can tell the process. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly logger: Logger;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly held = new Map<string, Held>();
  private onlyId: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private stopped = false;
  private stopping: Promise<void> | null = null;
  private readonly onDrain = () => void this.stop();

  constructor(
    private readonly api: SlackSurfaceApi,
    private readonly options: SlackSocketSupervisorOptions = {},
  ) {
    this.logger = (options.logger ?? api.logger).child({ component: 'slack-socket' });
    this.pollMs = options.pollMs ?? 5_000;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  /** The bots whose connection this supervisor holds now, with its state. */
  get connections(): Map<string, SocketConnection['state']> {
    return new Map([...this.held].map(([id, held]) => [id, held.connection.state]));
  }

  /** Resolves `only` (throws when no bot in socket mode, or several, answer to it), then polls at once and every pollMs until stopped or the process drains. */
  async start(): Promise<void> {
    if (this.options.only !== undefined) this.onlyId = await this.resolve(this.options.only);
    if (this.api.lifecycle.draining.aborted) {
      await this.stop();
      return;
    }
    this.api.lifecycle.draining.addEventListener('abort', this.onDrain, { once: true });
    this.ticking = this.tick();
    await this.ticking;
    // The lease must be renewed before it runs out, however long the poll.
    const every = Math.min(this.pollMs, this.leaseMs / 3);
    const next = () => {
      if (this.stopped) return;
      this.ticking = this.tick().finally(() => {
        if (!this.stopped) this.timer = setTimeout(next, every).unref();
      });
    };
    this.timer = setTimeout(next, every).unref();
  }

  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    this.stopped = true;
    this.api.lifecycle.draining.removeEventListener('abort', this.onDrain);
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await Promise.all([...this.held.keys()].map((id) => this.drop(id, { release: true })));
  }

  private async resolve(only: string): Promise<string> {
    const ids = await this.api.slackBots.socketBots();
    if (ids.includes(only)) return only;
    const named = (await Promise.all(ids.map((id) => this.api.slackBots.config(id)))).filter((bot): bot is SlackBotConfig => bot?.name === only);
    if (named.length === 1) return named[0].id;
    if (named.length === 0) throw new PalaiError('not-found', `No Slack bot in socket mode has the id or name ${JSON.stringify(only)}.`);
    throw new PalaiError(
      'invalid-request',
      `${named.length} Slack bots in socket mode are named ${JSON.stringify(only)} (${named.map((b) => b.id).join(', ')}); name one by its id.`,
    );
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let ids: string[];
    try {
      ids = await this.api.slackBots.socketBots();
    } catch (error) {
      this.logger.warn({ err: error }, 'reading the Slack bots in socket mode failed; retrying');
      await this.dropExpired();
      return;
    }
    const wanted = new Set(this.onlyId === null ? ids : ids.filter((id) => id === this.onlyId));
    for (const id of this.held.keys()) {
      if (!wanted.has(id)) await this.drop(id, { release: true, why: 'the bot is no longer in socket mode' });
    }
    for (const id of wanted) {
      if (this.stopped) return;
      await this.step(id).catch(async (error) => {
        this.logger.warn({ err: error, bot: id }, "renewing a Slack bot's Socket Mode lease failed; retrying");
        await this.dropExpired();
      });
    }
  }

  /** Takes or renews one bot's lease when due, then keeps its connection in line with the bot. */
  private async step(id: string): Promise<void> {
    const held = this.held.get(id);
    const now = Date.now();
    if (held && now - held.leasedAt < this.leaseMs / 3) {
      held.connection.poll(now);
      return;
    }
    const lease = await this.api.slackBots.leaseSocket(id, this.owner, this.leaseMs, held?.lease);
    if (!lease) {
      if (held) await this.drop(id, { release: false, why: "another process holds the bot's lease now" });
      return;
    }
    const bot = await this.api.slackBots.config(id);
    if (!bot || bot.mode !== 'socket' || !bot.appToken) {
      await this.drop(id, { release: true, why: 'the bot is no longer in socket mode' });
      return;
    }
    if (held) {
      held.lease = lease;
      held.leasedAt = now;
      await held.connection.update(bot);
      held.connection.poll();
      return;
    }
    // Loaded with the first bot in Socket Mode: the SDK is not loaded where none is.
    const { SocketConnection } = await import('./connection.js');
    const connection = new SocketConnection(this.api, bot, this.logger, { retryMs: this.pollMs, maxRetryMs: this.options.maxRetryMs ?? 5 * 60_000 });
    this.held.set(id, { connection, lease, leasedAt: now });
    this.logger.info({ bot: id, owner: this.owner }, "this process holds the bot's Socket Mode connection");
    connection.poll();
  }

  /** Without the store, a lease is held only until it would have run out: another process may have it then. */
  private async dropExpired(): Promise<void> {
    const now = Date.now();
    for (const [id, held] of this.held) {
      if (now - held.leasedAt >= this.leaseMs) await this.drop(id, { release: false, why: "the bot's lease could not be renewed in time" });
    }
  }

  private async drop(id: string, options: { release: boolean; why?: string }): Promise<void> {
    const held = this.held.get(id);
    if (!held) return;
    this.held.delete(id);
    if (options.why) this.logger.info({ bot: id }, `disconnecting the bot's Socket Mode connection: ${options.why}`);
    await held.connection.close();
    if (options.release)
      await this.api.slackBots
        .releaseSocket(id, held.lease)
        .catch((error) => this.logger.warn({ err: error, bot: id }, "handing back a Slack bot's Socket Mode lease failed; it runs out by itself"));
  }
}
