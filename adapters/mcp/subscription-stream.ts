// GET /mcp without a call to resume: the session's standalone SSE stream, which
// carries notifications/resources/updated for the resources the session
// subscribed to. It follows the project's journal feed, so any process serves
// it: an event that changes a watched response (a status, a finished item) or
// ends a run of a watched session announces that resource. The subscriptions
// are read from the store at each such event, so one made on another process
// counts from the moment it was answered. Event ids are feed cursors: a host
// that lost the stream resumes it with Last-Event-ID, on any process.
//
// The stream ends with the host's connection, the session (DELETE on any
// process signals the others, and a poll catches a lost signal), or as soon as
// the process starts draining: it is no work to finish, and the host resumes
// it elsewhere from its last event id (a draining process refuses it, 503).
import type { Response } from 'express';
import type { ResourceUpdatedNotification } from '@modelcontextprotocol/sdk/types.js';
import { isSettled, type FeedCursor, type FeedEntry } from '../../core/api/index.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { McpSession } from '../../core/surfaces/mcp/mcp-sessions-port.js';
import { refuse, TRANSPORT_ERROR } from './http-answers.js';
import { PRIMING_FROM_VERSION, RequestStream } from './request-stream.js';
import { uriOf } from './resources.js';

/** Sent when a session ends (DELETE /mcp), its id as the payload. */
export const SESSION_ENDED_SIGNAL = 'mcp.session-ended';
/** How often an open stream checks its session still lives, should the signal be lost. */
const LIVENESS_POLL_MS = 30_000;

const FEED_EVENT_ID = /^feed\.(\d{1,20}\.\d{1,19}(?:\.\d{1,10})?)$/;
export const feedEventId = (cursor: FeedCursor): string => `feed.${cursor}`;
/** The feed cursor a Last-Event-ID of this stream names, or null for any other id. */
export const parseFeedEventId = (id: string): FeedCursor | null => FEED_EVENT_ID.exec(id)?.[1] ?? null;

/** Whether an event may change what a resource reads: a response's status or a finished item. */
const changesResource = (entry: FeedEntry): boolean => entry.event.type === 'status' || entry.event.type === 'item.done';

/**
 * The sessions ending in this process's view: one signal listener for all the
 * streams open here, held while any is open.
 */
export class SessionEnds {
  private readonly watchers = new Map<string, Set<() => void>>();
  private listening: Promise<() => Promise<void>> | null = null;

  constructor(private readonly api: McpSurfaceApi) {}

  async watch(sessionId: string, ended: () => void): Promise<() => void> {
    let set = this.watchers.get(sessionId);
    if (!set) this.watchers.set(sessionId, (set = new Set()));
    set.add(ended);
    this.listening ??= this.api.signals.listen(SESSION_ENDED_SIGNAL, (id) => this.watchers.get(id)?.forEach((watcher) => watcher()));
    await this.listening;
    return () => {
      set.delete(ended);
      if (set.size === 0) this.watchers.delete(sessionId);
      if (this.watchers.size === 0 && this.listening) {
        const stop = this.listening;
        this.listening = null;
        void stop.then((unlisten) => unlisten()).catch((error) => this.api.logger.warn({ err: error }, 'stopping the MCP session signal failed'));
      }
    };
  }

  /** Tells every process's streams of the session that it ended. */
  announce(sessionId: string): Promise<void> {
    return this.api.signals.notify(SESSION_ENDED_SIGNAL, sessionId);
  }
}

const updated = (uri: string): ResourceUpdatedNotification => ({ method: 'notifications/resources/updated', params: { uri } });

export async function serveSubscriptions(
  api: McpSurfaceApi,
  ends: SessionEnds,
  session: McpSession,
  res: Response,
  signal: AbortSignal,
  after?: FeedCursor,
): Promise<void> {
  if (api.lifecycle.draining.aborted) {
    return refuse(res, 503, TRANSPORT_ERROR, 'This process is shutting down: open the stream again, another one serves it.', { 'Retry-After': '1' });
  }
  const { projectId } = session;
  const stream = new RequestStream(res, 'sse', session.id);
  const ended = new AbortController();
  const done = AbortSignal.any([signal, ended.signal, api.lifecycle.draining]);
  done.addEventListener('abort', () => void stream.close(), { once: true });
  const unwatch = await ends.watch(session.id, () => ended.abort());
  const poll = setInterval(() => {
    api.mcpSessions
      .subscriptions(projectId, session.id)
      .then((uris) => uris === null && ended.abort())
      .catch((error) => api.logger.warn({ err: error }, 'checking an MCP session failed'));
  }, LIVENESS_POLL_MS).unref();
  // Which session each response belongs to (it never changes), read once per response.
  const sessionOf = new Map<string, string | null>();
  const sessionOfResponse = async (responseId: string): Promise<string | null> => {
    if (!sessionOf.has(responseId))
      sessionOf.set(
        responseId,
        await api.responses.get(projectId, responseId).then(
          (state) => state.session_id,
          () => null,
        ),
      );
    return sessionOf.get(responseId)!;
  };
  try {
    const cursor = after ?? (await api.journal.latest(projectId));
    // The priming event: the host has a cursor before anything happens.
    if (session.protocolVersion >= PRIMING_FROM_VERSION) stream.event(null, feedEventId(cursor));
    else stream.hold();
    for await (const entry of api.journal.follow(projectId, { after: cursor, signal: done })) {
      if (!changesResource(entry)) continue;
      const uris = await api.mcpSessions.subscriptions(projectId, session.id);
      if (uris === null) break;
      if (uris.length === 0) continue;
      const watched = new Set(uris);
      const changed = [uriOf({ kind: 'response', id: entry.responseId })];
      const settles = entry.event.type === 'status' && isSettled(entry.event.status);
      if (settles && uris.some((uri) => uri.startsWith('palai://sessions/'))) {
        const sessionId = await sessionOfResponse(entry.responseId);
        if (sessionId) changed.push(uriOf({ kind: 'session', id: sessionId }));
      }
      for (const uri of changed) if (watched.has(uri)) stream.event({ jsonrpc: '2.0', ...updated(uri) }, feedEventId(entry.cursor));
    }
  } catch (error) {
    if (!done.aborted) api.logger.warn({ err: error }, 'an MCP subscription stream failed');
  } finally {
    clearInterval(poll);
    unwatch();
    await stream.close();
  }
}
