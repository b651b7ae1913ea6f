// Binds the Slack wing's slice to one kernel.
import { atBoundary } from '../../api/boundary.js';
import type { Kernel } from '../../kernel.js';
import { admitSlackMessage, isKnownThread } from './admission.js';
import { decideFromSlack } from './approvals.js';
import { createSlackBot, deleteSlackBot, getSlackBot, listSlackBots, listSlackThreads, slackBotConfig, updateSlackBot } from './bots.js';
import type { SlackApi } from './slack-api.js';
import { leaseSlackSocket, releaseSlackSocket, socketSlackBots } from './socket-lease.js';
import { claimSlackReplies, saveSlackReply } from './streams.js';

export function createSlackApi({ db, secrets, inbox }: Kernel): SlackApi {
  return atBoundary({
    slackBots: {
      create: (projectId, request, options) => createSlackBot(db, secrets, projectId, request, options?.idempotency),
      get: (projectId, ref) => getSlackBot(db, projectId, ref),
      list: (projectId, page) => listSlackBots(db, projectId, page),
      update: (projectId, ref, request) => updateSlackBot(db, secrets, projectId, ref, request),
      delete: (projectId, ref) => deleteSlackBot(db, secrets, projectId, ref),
      threads: (projectId, ref, page) => listSlackThreads(db, projectId, ref, page),
      config: (botId) => slackBotConfig(db, secrets, botId),
      admit: (bot, message) => admitSlackMessage(db, inbox, bot, message),
      knowsThread: (botId, message) => isKnownThread(db, botId, message),
      claimReplies: (owner, limit, leaseMs) => claimSlackReplies(db, owner, limit, leaseMs),
      saveReply: (responseId, owner, leaseMs, save) => saveSlackReply(db, responseId, owner, leaseMs, save),
      decide: (bot, decision) => decideFromSlack(db, bot, decision),
      socketBots: () => socketSlackBots(db),
      leaseSocket: (botId, owner, ttlMs, held) => leaseSlackSocket(db, botId, owner, ttlMs, held),
      releaseSocket: (botId, tenure) => releaseSlackSocket(db, botId, tenure),
    },
  });
}
