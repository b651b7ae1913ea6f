// Slack bots: a project's Slack apps, each serving one agent in threads
// (docs/slack.md). The kernel keeps the bot and its secrets (bot token, signing
// secret, app token) by reference in the secret store; the Slack surface
// (bots/slack) verifies Slack's requests and posts the answers.
import type { CreateSlackBotRequest, SlackBot, SlackThread, UpdateSlackBotRequest } from '../../../generated/schemas.js';
import { requireAgent } from '../../agents/agents.js';
import { PalaiError } from '../../errors/palai-error.js';
import { newId } from '../../ids.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import { unixSeconds } from '../../json.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import { resourceLookup } from '../../resources/find-by-ref.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import { needsSecretKey, removeSealed, revealValues, sealValues, type Sealing } from '../../secrets/sealed-fields.js';
import { isUniqueViolation, type Db, type Queryable } from '../../store/db.js';
import { DEFAULT_SLACK_API_URL, type SlackBotConfig } from './slack-bots-port.js';

const TOKENS: Sealing = {
  purpose: { bot_token: 'slack-bot-token', signing_secret: 'slack-signing-secret', app_token: 'slack-app-token' },
  noSecretKey: (field) => needsSecretKey("Storing a Slack bot's tokens", `/${field}`),
};

interface SlackBotRow {
  id: string;
  project_id: string;
  name: string;
  agent_id: string;
  mode: 'http' | 'socket';
  approvers: string[];
  api_url: string;
  bot_token_secret_id: string;
  bot_token_last4: string;
  signing_secret_secret_id: string;
  app_token_secret_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export function slackBotView(row: SlackBotRow): SlackBot {
  return {
    id: row.id,
    object: 'slack_bot',
    name: row.name,
    agent: row.agent_id,
    mode: row.mode,
    approvers: row.approvers,
    api_url: row.api_url,
    events_path: `/slack/${row.id}/events`,
    interactions_path: `/slack/${row.id}/interactions`,
    bot_token_last4: row.bot_token_last4,
    has_app_token: row.app_token_secret_id !== null,
    created_at: unixSeconds(row.created_at)!,
    updated_at: unixSeconds(row.updated_at)!,
  };
}

const invalid = (field: string, detail: string) =>
  new PalaiError('validation-failed', `Slack bot ${field} ${detail}.`, { errors: [{ pointer: `/${field}`, detail }] });

/** The schema checks the scheme's spelling; this checks the URL parses and carries no credentials. */
function checkApiUrl(url: string | undefined): string {
  if (url === undefined) return DEFAULT_SLACK_API_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('api_url', 'is not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid('api_url', 'must be an http or https URL');
  if (parsed.username || parsed.password) throw invalid('api_url', 'must not carry a user name or password');
  // The Web API client appends method names: the base must end in a slash.
  return url.endsWith('/') ? url : `${url}/`;
}

function checkMode(mode: string | undefined, appToken: string | null | undefined): void {
  if (mode === 'socket' && !appToken) throw invalid('app_token', 'is required for a bot in socket mode');
}

/** The bot named by id (`sbot_…`) or name. */
const { find: findBot, require: requireBot } = resourceLookup<SlackBotRow>(
  { table: 'slack_bots', idPrefix: 'sbot_' },
  (ref) => new PalaiError('not-found', `No Slack bot with id or name ${JSON.stringify(ref)} in this project.`),
);

const conflict = (name: string) => new PalaiError('conflict', `A Slack bot named ${JSON.stringify(name)} already exists.`);

const last4 = (token: string) => token.slice(-4);

export async function createSlackBot(
  db: Db,
  secrets: SecretStore,
  projectId: string,
  request: CreateSlackBotRequest,
  idem?: IdempotencyClaim,
): Promise<SlackBot> {
  const apiUrl = checkApiUrl(request.api_url);
  checkMode(request.mode, request.app_token);
  if (await findBot(db, projectId, request.name)) throw conflict(request.name);
  const id = newId('sbot');
  try {
    return await db.transaction(async (tx) => {
      await reserveKey(tx, projectId, idem, id);
      const agent = await requireAgent(tx, projectId, request.agent);
      const sealed = await sealValues(tx, secrets, projectId, TOKENS, {
        bot_token: request.bot_token,
        signing_secret: request.signing_secret,
        app_token: request.app_token || null,
      });
      const { rows } = await tx.query<SlackBotRow>(
        `INSERT INTO slack_bots (id, project_id, name, agent_id, mode, approvers, api_url, bot_token_secret_id, bot_token_last4, signing_secret_secret_id, app_token_secret_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        [
          id,
          projectId,
          request.name,
          agent.id,
          request.mode ?? 'http',
          JSON.stringify(request.approvers ?? []),
          apiUrl,
          sealed.bot_token.id,
          last4(request.bot_token),
          sealed.signing_secret.id,
          sealed.app_token?.id ?? null,
        ],
      );
      const view = slackBotView(rows[0]);
      await recordAnswer(tx, projectId, idem, 201, view, id);
      return view;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(request.name);
    throw error;
  }
}

export async function getSlackBot(db: Db, projectId: string, ref: string): Promise<SlackBot> {
  return slackBotView(await requireBot(db, projectId, ref));
}

export async function listSlackBots(db: Db, projectId: string, page: PageRequest): Promise<Page<SlackBot>> {
  const { rows } = await db.query<SlackBotRow>('SELECT * FROM slack_bots WHERE project_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3', [
    projectId,
    page.after ?? null,
    fetchSize(page),
  ]);
  return toPage(rows, page, slackBotView);
}

/** A changed secret replaces the stored one; the old one is removed in the same transaction. */
export async function updateSlackBot(db: Db, secrets: SecretStore, projectId: string, ref: string, request: UpdateSlackBotRequest): Promise<SlackBot> {
  const apiUrl = request.api_url === undefined ? null : checkApiUrl(request.api_url);
  return db.transaction(async (tx) => {
    const row = await requireBot(tx, projectId, ref, true);
    const appTokenAfter = request.app_token === undefined ? row.app_token_secret_id : request.app_token;
    checkMode(row.mode, appTokenAfter);
    const agentId = request.agent === undefined ? row.agent_id : (await requireAgent(tx, projectId, request.agent)).id;
    const sealed = await sealValues(tx, secrets, projectId, TOKENS, {
      bot_token: request.bot_token,
      signing_secret: request.signing_secret,
      app_token: request.app_token,
    });
    const next = {
      bot: sealed.bot_token?.id ?? row.bot_token_secret_id,
      botLast4: request.bot_token === undefined ? row.bot_token_last4 : last4(request.bot_token),
      signing: sealed.signing_secret?.id ?? row.signing_secret_secret_id,
      app: request.app_token === undefined ? row.app_token_secret_id : (sealed.app_token?.id ?? null),
    };
    const replaced = [
      request.bot_token === undefined ? null : row.bot_token_secret_id,
      request.signing_secret === undefined ? null : row.signing_secret_secret_id,
      request.app_token === undefined ? null : row.app_token_secret_id,
    ];
    const { rows } = await tx.query<SlackBotRow>(
      `UPDATE slack_bots SET agent_id = $2, approvers = coalesce($3, approvers), api_url = coalesce($4, api_url), bot_token_secret_id = $5, bot_token_last4 = $6,
         signing_secret_secret_id = $7, app_token_secret_id = $8, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [row.id, agentId, request.approvers ? JSON.stringify(request.approvers) : null, apiUrl, next.bot, next.botLast4, next.signing, next.app],
    );
    await removeSealed(tx, secrets, projectId, replaced);
    return slackBotView(rows[0]);
  });
}

/** Deletes the bot and its stored secrets; its threads' sessions stay. */
export async function deleteSlackBot(db: Db, secrets: SecretStore, projectId: string, ref: string): Promise<string> {
  return db.transaction(async (tx) => {
    const row = await requireBot(tx, projectId, ref, true);
    await tx.query('DELETE FROM slack_bots WHERE id = $1', [row.id]);
    await removeSealed(tx, secrets, projectId, [row.bot_token_secret_id, row.signing_secret_secret_id, row.app_token_secret_id]);
    return row.id;
  });
}

interface ThreadRow {
  id: string;
  team: string;
  channel: string;
  thread_ts: string;
  session_id: string;
  created_at: Date;
}

export async function listSlackThreads(db: Db, projectId: string, ref: string, page: PageRequest): Promise<Page<SlackThread>> {
  const bot = await requireBot(db, projectId, ref);
  const { rows } = await db.query<ThreadRow>(
    `SELECT * FROM (SELECT team || ':' || channel || ':' || thread_ts AS id, team, channel, thread_ts, session_id, created_at FROM slack_threads WHERE bot_id = $1) t
     WHERE $2::text IS NULL OR id > $2 ORDER BY id LIMIT $3`,
    [bot.id, page.after ?? null, fetchSize(page)],
  );
  return toPage(rows, page, (r) => ({
    id: r.id,
    object: 'slack_thread' as const,
    team: r.team,
    channel: r.channel,
    thread_ts: r.thread_ts,
    session_id: r.session_id,
    created_at: unixSeconds(r.created_at)!,
  }));
}

/**
 * A bot by id alone, across projects, with its secrets revealed: for Slack's
 * requests, which carry no API key. The surface must verify the request's
 * signature with it before doing anything else. Null when there is no such bot.
 */
export async function slackBotConfig(db: Db, secrets: SecretStore, botId: string): Promise<SlackBotConfig | null> {
  if (!botId.startsWith('sbot_')) return null;
  const { rows } = await db.query<SlackBotRow>('SELECT * FROM slack_bots WHERE id = $1', [botId]);
  const row = rows[0];
  if (!row) return null;
  const tokens = await revealValues(db, secrets, row.project_id, {
    bot: row.bot_token_secret_id,
    signing: row.signing_secret_secret_id,
    app: row.app_token_secret_id,
  });
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    agentId: row.agent_id,
    mode: row.mode,
    approvers: row.approvers,
    apiUrl: row.api_url,
    botToken: tokens.bot,
    signingSecret: tokens.signing,
    appToken: tokens.app,
  };
}
