// A Slack call that failed, sorted: `permanent` (no retry changes it: the bot
// cannot post there), `refused` (this method is not available here: a fallback
// exists), `transient` (a later attempt may succeed). Its message is one short
// line that names the method, never a token.
export class SlackCallError extends Error {
  constructor(
    readonly kind: 'permanent' | 'refused' | 'transient',
    message: string,
    readonly slackError: string | null = null,
  ) {
    super(message);
  }
}
