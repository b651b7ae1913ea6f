// Projecting one response's answer into its thread: the segments of the answer
// (see answer.ts) are posted in order; a text segment streams into one message
// with chat.startStream / appendStream / stopStream, or, where Slack (or a
// Slack-compatible server) refuses streaming, is posted and then edited with
// chat.update. Every call is followed by a save of the progress, so a
// restarted streamer continues the same message. Text goes as markdown_text:
// Slack renders the agent's Markdown itself.
import { createHash } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import type { SlackReplyJob, SlackReplyProgress, SlackReplySave } from '../../core/surfaces/slack/slack-bots-port.js';
import type { Answer, Segment } from './answer.js';
import { approvalBlocks, approvalSummary } from './blocks.js';
import { SlackCallError } from './slack-call-error.js';
import { callSlack } from './slack-calls.js';

type TextSegment = Extract<Segment, { kind: 'text' }>;

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

export class ThreadProjection {
  progress: SlackReplyProgress;

  constructor(
    private readonly client: webApi.WebClient,
    private readonly job: SlackReplyJob,
    /** Saves progress; rejects when the lease was lost, which stops the projection. */
    private readonly save: (save: SlackReplySave) => Promise<void>,
    private readonly signal: AbortSignal,
  ) {
    this.progress = { ...job.progress, digest: job.progress.digest ?? null };
  }

  /** Posts what the answer holds beyond the saved progress. */
  async sync(answer: Answer): Promise<void> {
    while (this.progress.segment < answer.segments.length) {
      this.signal.throwIfAborted();
      const segment = answer.segments[this.progress.segment];
      if (segment.kind === 'text') {
        await this.syncText(segment);
        if (!segment.complete) return;
        await this.finishText();
      } else if (segment.kind === 'approval') {
        const summary = approvalSummary(segment.call);
        const prompt = { responseId: this.job.responseId, callId: segment.call.call_id, channel: this.job.channel, summary };
        // Recorded first: a click can come as soon as Slack shows the message, before its answer reaches us.
        await this.save({ prompts: [{ ...prompt, messageTs: null }] });
        const posted = await this.call('chat.postMessage', () =>
          this.client.chat.postMessage({
            channel: this.job.channel,
            thread_ts: this.job.threadTs,
            text: `Approval needed to run ${segment.call.name}`,
            blocks: approvalBlocks(this.job.responseId, segment.call, summary),
          }),
        );
        await this.advance([{ ...prompt, messageTs: String(posted.ts) }]);
      } else {
        await this.call('chat.postMessage', () =>
          this.client.chat.postMessage({ channel: this.job.channel, thread_ts: this.job.threadTs, markdown_text: segment.text }),
        );
        await this.advance();
      }
    }
  }

  private async syncText(segment: TextSegment): Promise<void> {
    const { ts, sent } = this.progress;
    if (ts && sent > 0) {
      // A model call that broke off is being retried: its answer streams again; wait until it passes what is shown.
      if (segment.text.length < sent && !segment.complete) return;
      if (digest(segment.text.slice(0, sent)) !== this.progress.digest) return this.rewrite(segment);
    }
    const unsent = segment.text.slice(sent);
    if (!unsent) return;
    if (!ts) return this.start(segment.text);
    if (this.progress.mode === 'stream') {
      try {
        await this.call('chat.appendStream', () => this.client.chat.appendStream({ channel: this.job.channel, ts, markdown_text: unsent }));
        return this.saveText(segment.text);
      } catch (error) {
        if (!(error instanceof SlackCallError) || error.kind !== 'refused') throw error;
        // The stream closed under us (Slack ends idle streams): the rest goes in by editing.
        this.progress.mode = 'edit';
      }
    }
    await this.call('chat.update', () => this.client.chat.update({ channel: this.job.channel, ts, markdown_text: segment.text }));
    await this.saveText(segment.text);
  }

  /** The first text of a message: a stream where Slack allows it, else a message to edit. */
  private async start(text: string): Promise<void> {
    if (this.progress.mode !== 'edit') {
      try {
        const started = await this.call('chat.startStream', () =>
          this.client.chat.startStream({
            channel: this.job.channel,
            thread_ts: this.job.threadTs,
            markdown_text: text,
            recipient_team_id: this.job.team,
            ...(this.job.userId ? { recipient_user_id: this.job.userId } : {}),
          }),
        );
        this.progress = { ...this.progress, ts: String(started.ts), mode: 'stream' };
        return this.saveText(text);
      } catch (error) {
        if (!(error instanceof SlackCallError) || error.kind !== 'refused') throw error;
      }
    }
    const posted = await this.call('chat.postMessage', () =>
      this.client.chat.postMessage({ channel: this.job.channel, thread_ts: this.job.threadTs, markdown_text: text }),
    );
    this.progress = { ...this.progress, ts: String(posted.ts), mode: 'edit' };
    await this.saveText(text);
  }

  /** What is in the message is no longer the answer (a model call broke off and was retried): replace it. */
  private async rewrite(segment: TextSegment): Promise<void> {
    const ts = this.progress.ts!;
    if (this.progress.mode === 'stream')
      await this.call('chat.stopStream', () => this.client.chat.stopStream({ channel: this.job.channel, ts })).catch(() => undefined);
    this.progress.mode = 'edit';
    if (segment.text) await this.call('chat.update', () => this.client.chat.update({ channel: this.job.channel, ts, markdown_text: segment.text }));
    else await this.call('chat.delete', () => this.client.chat.delete({ channel: this.job.channel, ts }));
    if (!segment.text) this.progress = { ...this.progress, ts: null, mode: null };
    await this.saveText(segment.text);
  }

  private async finishText(): Promise<void> {
    const { ts, mode } = this.progress;
    if (ts && mode === 'stream') {
      await this.call('chat.stopStream', () => this.client.chat.stopStream({ channel: this.job.channel, ts })).catch((error: unknown) => {
        // A stream Slack closed already is as good as stopped.
        if (!(error instanceof SlackCallError) || error.kind !== 'refused') throw error;
      });
    }
    await this.advance();
  }

  private saveText(text: string): Promise<void> {
    this.progress = { ...this.progress, sent: text.length, digest: digest(text) };
    return this.save({ progress: this.progress });
  }

  private advance(prompts?: SlackReplySave['prompts']): Promise<void> {
    // Later segments start in a fresh message, streamed unless this one could not be.
    this.progress = { segment: this.progress.segment + 1, ts: null, sent: 0, digest: null, mode: this.progress.mode === 'edit' ? 'edit' : null };
    return this.save({ progress: this.progress, prompts });
  }

  private call<T>(method: string, call: () => Promise<T>): Promise<T> {
    return callSlack(method, call, this.signal);
  }
}
