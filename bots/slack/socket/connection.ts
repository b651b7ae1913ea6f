// One bot's Socket Mode connection, kept while this process holds the bot's
// lease (supervisor.ts). Slack redelivers an envelope until it is acknowledged,
// so one is acknowledged only once its payload is admitted (dispatch.ts).
//
//            poll, pause over            hello
//   waiting ─────────────────▶ connecting ─────▶ open
//      ▲                           │ failed         │ closed (Slack's refresh, a lost ping)
//      └───────────────────────────┴────────────────┘
//   any state ── close() ──▶ closed
//
// Reconnecting is done here rather than by the SDK: its own reconnect loop
// leaves a failed apps.connections.open as an unhandled rejection and retries a
// refused WebSocket forever. A connection that stayed open reconnects at once;
// each failed attempt waits twice as long as the one before, so a refused app
// token does not spin.
import { SocketModeClient } from '@slack/socket-mode';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SlackSurfaceApi } from '../../../core/surfaces/slack/slack-api.js';
import { egressRefusalIn } from '../../../core/egress/egress-port.js';
import type { Logger } from '../../../core/logger.js';
import type { SlackBotConfig } from '../../../core/surfaces/slack/slack-bots-port.js';
import { dispatchEvent, dispatchInteraction, type DispatchOutcome } from '../dispatch.js';
import { slackClientOptions } from '../web-client.js';
import { guardedWebSocketDispatcher, type GuardedWebSocketDispatcher } from './guarded-websocket.js';
import { scrubbed, sdkLogger } from './sdk-logger.js';

export type ConnectionState = 'waiting' | 'connecting' | 'open' | 'closed';

const NEXT: Record<ConnectionState, readonly ConnectionState[]> = {
  waiting: ['connecting', 'closed'],
  connecting: ['open', 'waiting', 'closed'],
  open: ['waiting', 'closed'],
  closed: [],
};

/** apps.connections.open and the WebSocket handshake up to Slack's hello. */
const CONNECT_TIMEOUT_MS = 30_000;
/** How long a closing connection waits for the peer's close frame before its socket is destroyed. */
const CLOSE_GRACE_MS = 2_000;
/** A connection open at least this long counts as healthy: when it closes, the next one is opened at once. */
const HEALTHY_MS = 30_000;

export interface ConnectionPauses {
  /** The pause after a first failed attempt; it doubles with each further one. */
  retryMs: number;
  /** The longest pause. */
  maxRetryMs: number;
}

/** An envelope as the SDK hands it over (its `slack_event`). */
interface Envelope {
  type: string;
  envelope_id: string;
  body: unknown;
  retry_num?: number;
  ack(response?: Record<string, unknown>): Promise<void>;
}

export class SocketConnection {
  private current: ConnectionState = 'waiting';
  private client: SocketModeClient | null = null;
  private dispatcher: GuardedWebSocketDispatcher | null = null;
  private attempt: Promise<void> = Promise.resolve();
  private failures = 0;
  private retryAt = 0;
  private openedAt = 0;

  constructor(
    private readonly api: SlackSurfaceApi,
    private bot: SlackBotConfig,
    private readonly logger: Logger,
    private readonly pauses: ConnectionPauses,
  ) {}

  get state(): ConnectionState {
    return this.current;
  }

  /** The bot as the store has it now: envelopes are served with it; a new app token or api_url reconnects. */
  async update(bot: SlackBotConfig): Promise<void> {
    const changed = bot.appToken !== this.bot.appToken || bot.apiUrl !== this.bot.apiUrl;
    this.bot = bot;
    if (!changed || this.current === 'closed' || this.current === 'waiting') {
      if (changed) this.failures = this.retryAt = 0;
      return;
    }
    this.logger.info({ bot: bot.id }, "the bot's app token or api_url changed; reconnecting");
    const client = this.client;
    this.client = null;
    await this.end(client, this.dispatcher);
    await this.attempt;
    this.failures = this.retryAt = 0;
    if (!this.isClosed()) this.move('waiting');
  }

  /** Connects when waiting and the pause is over; called on every poll. */
  poll(now = Date.now()): void {
    if (this.current !== 'waiting' || now < this.retryAt) return;
    this.attempt = this.connect().catch((error) => this.logger.error({ err: error, bot: this.bot.id }, 'a Socket Mode connection attempt failed unexpectedly'));
  }

  /** Disconnects for good. */
  async close(): Promise<void> {
    if (this.current === 'closed') return;
    this.move('closed');
    const client = this.client;
    this.client = null;
    await this.end(client, this.dispatcher);
    await this.attempt;
  }

  /** Read afresh after an await, when close() may have run meanwhile. */
  private isClosed(): boolean {
    return this.current === 'closed';
  }

  private move(to: ConnectionState): void {
    if (!NEXT[this.current].includes(to)) throw new Error(`a Socket Mode connection cannot go from ${this.current} to ${to}`);
    this.current = to;
  }

  private async connect(): Promise<void> {
    this.move('connecting');
    const bot = this.bot;
    const dispatcher = guardedWebSocketDispatcher(this.api.egressSockets);
    const client = new SocketModeClient({
      appToken: bot.appToken ?? '',
      autoReconnectEnabled: false,
      logger: sdkLogger(this.logger),
      clientOptions: slackClientOptions(this.api, bot),
      dispatcher: dispatcher.agent,
    });
    this.client = client;
    this.dispatcher = dispatcher;
    let lastError: unknown = null;
    client.on('error', (error: unknown) => void (lastError = error));
    client.on('slack_event', (envelope: Envelope) => void this.serve(envelope));
    const timeout = setTimeout(() => void this.end(client, dispatcher), CONNECT_TIMEOUT_MS).unref();
    try {
      await client.start();
    } catch (error) {
      if (this.client !== client) return;
      this.client = null;
      await this.end(client, dispatcher);
      if (this.isClosed()) return;
      this.failures += 1;
      const pause = this.pause();
      this.retryAt = Date.now() + pause;
      this.move('waiting');
      this.logger.warn({ bot: bot.id, retry_in_ms: pause }, `Slack Socket Mode could not connect: ${failureOf(error ?? lastError, dispatcher)}`);
      return;
    } finally {
      clearTimeout(timeout);
    }
    // Closed or replaced while connecting: the SDK connects even after a disconnect during apps.connections.open.
    if (this.client !== client) {
      await this.end(client, dispatcher);
      return;
    }
    this.openedAt = Date.now();
    this.move('open');
    this.logger.info({ bot: bot.id }, 'Slack Socket Mode connected');
    client.once('disconnected', () => void this.closed(client));
  }

  /** The open connection ended without being asked to. */
  private async closed(client: SocketModeClient): Promise<void> {
    if (this.client !== client || this.current !== 'open') return;
    this.client = null;
    await this.end(client, this.dispatcher);
    if (this.isClosed()) return;
    this.failures = Date.now() - this.openedAt >= HEALTHY_MS ? 0 : this.failures + 1;
    const pause = this.pause();
    this.retryAt = Date.now() + pause;
    this.move('waiting');
    this.logger.info({ bot: this.bot.id, retry_in_ms: pause }, 'Slack Socket Mode connection closed; reconnecting');
    this.poll();
  }

  private pause(): number {
    return this.failures === 0 ? 0 : Math.min(this.pauses.retryMs * 2 ** (this.failures - 1), this.pauses.maxRetryMs);
  }

  /** Ends a client: the close handshake if the peer answers in time, then its sockets in any case. */
  private async end(client: SocketModeClient | null, dispatcher: GuardedWebSocketDispatcher | null): Promise<void> {
    if (dispatcher && this.dispatcher === dispatcher) this.dispatcher = null;
    if (client) await Promise.race([client.disconnect().catch(() => undefined), sleep(CLOSE_GRACE_MS, undefined, { ref: false })]);
    await dispatcher?.destroy();
  }

  private async serve(envelope: Envelope): Promise<void> {
    const bot = this.bot;
    const where = { bot: bot.id, envelope: envelope.envelope_id, type: envelope.type, retry: envelope.retry_num };
    try {
      let outcome: DispatchOutcome;
      switch (envelope.type) {
        case 'events_api':
          outcome = await dispatchEvent(this.api, bot, envelope.body, this.logger);
          break;
        case 'interactive':
          outcome = await dispatchInteraction(this.api, bot, envelope.body, this.logger);
          break;
        default:
          // Slash commands and the like: the manifest subscribes to none; acknowledged so Slack stops sending it.
          this.logger.debug(where, 'a Socket Mode envelope of a kind the bot does not serve');
          outcome = { kind: 'ack' };
      }
      switch (outcome.kind) {
        case 'ack':
          await envelope.ack(outcome.body as Record<string, unknown> | undefined);
          return;
        case 'retry':
          this.logger.debug({ ...where, detail: outcome.detail }, 'a Socket Mode envelope left unacknowledged; Slack sends it again');
          return;
        default: {
          const unknown: never = outcome;
          throw new Error(`unknown dispatch outcome ${JSON.stringify(unknown)}`);
        }
      }
    } catch (error) {
      // Never thrown into the SDK: it would be an unhandled rejection. Unacknowledged, Slack sends it again.
      this.logger.warn({ ...where, detail: scrubbed(messageOf(error)) }, 'a Socket Mode envelope could not be served');
    }
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message || error.name : String(error));

/** Why an attempt failed, in one line without a secret. */
function failureOf(error: unknown, dispatcher: GuardedWebSocketDispatcher): string {
  if (dispatcher.refusal) return dispatcher.refusal.message;
  const failure = (error ?? {}) as { code?: string; data?: { error?: string }; statusCode?: number; original?: unknown };
  switch (failure.code) {
    case 'slack_webapi_platform_error':
      return `apps.connections.open answered ${failure.data?.error ?? 'an error'}${/auth|inactive|disabled|removed/.test(failure.data?.error ?? '') ? " (check the bot's app token)" : ''}`;
    case 'slack_webapi_rate_limited_error':
      return 'apps.connections.open is rate limited';
    case 'slack_webapi_http_error':
      return `apps.connections.open answered HTTP ${failure.statusCode}`;
    case 'slack_webapi_request_error':
      return scrubbed(egressRefusalIn(failure.original)?.message ?? `apps.connections.open failed: ${messageOf(failure.original)}`);
  }
  if (error === undefined || error === null) return 'the WebSocket closed before Slack said hello';
  return scrubbed(egressRefusalIn(error)?.message ?? messageOf(error));
}
