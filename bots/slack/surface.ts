// The Slack surface as a module of the hub: the bots' HTTP-mode routes under
// /slack, the streamer that projects answers from the journal into threads
// (wherever responses run), the Socket Mode connections (roles consumers and
// all; an intake, stopped first), and the bots' REST resources.
import { INTAKE_ROLES, WORK_ROLES, type SurfaceModule } from '../../core/api/index.js';
import type { SlackSurfaceApi } from '../../core/surfaces/slack/slack-api.js';
import { slackNoticeConsumer } from './notice-consumer.js';
import { slackBotOperations } from './operations.js';
import { slackRouter } from './router.js';
import { SlackSocketSupervisor } from './socket/supervisor.js';
import { SlackStreamer } from './streamer.js';

export interface SlackSurface extends SurfaceModule {
  /** Holds the Socket Mode connections where this process takes intake work. */
  readonly sockets: SlackSocketSupervisor;
  /** A supervisor of one bot's connection alone (`palai bot slack`), started and stopped by its caller. */
  socketsOf(bot: string): SlackSocketSupervisor;
}

export function slackSurface(api: SlackSurfaceApi): SlackSurface {
  const streamer = new SlackStreamer(api);
  const sockets = new SlackSocketSupervisor(api);
  return {
    name: 'slack',
    sockets,
    socketsOf: (bot) => new SlackSocketSupervisor(api, { only: bot }),
    http: [{ path: '/slack', handler: slackRouter(api) }],
    // An objective's notifications, posted in the thread its session is.
    outboxConsumers: [slackNoticeConsumer(api)],
    operations: slackBotOperations(api),
    loops: [
      { name: 'slack-sockets', roles: INTAKE_ROLES, intake: true, start: () => sockets.start(), stop: () => sockets.stop() },
      // Answers stream into Slack threads from the journal, wherever work runs.
      { name: 'slack-streamer', roles: WORK_ROLES, start: () => streamer.start(), stop: () => streamer.stop() },
    ],
  };
}
