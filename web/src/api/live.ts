import { createClient, type Client } from 'graphql-ws/client';

import type { LiveEvent } from './types.ts';

// Live events over GET /api/ws (subprotocol graphql-transport-ws). The cookie authenticates the
// upgrade; the connection lives no longer than the session (close 4401 `session ended`).

const EVENT = `type serverId conversationId at payload`;
const RELAY = `subscription RelayStream { relayStream { ${EVENT} } }`;
/**
 * With the host each event came from: a field only a relay has (a server with SVC_ROLE=host
 * refuses the subscription that selects it), so asked only of a server known to relay.
 */
const RELAY_HOSTS = `subscription RelayStream { relayStream { ${EVENT} hostServerId } }`;
const WORKSPACE = `subscription WorkspaceEvents($serverId: ID!) { workspaceEvents(serverId: $serverId) { ${EVENT} } }`;

export interface LiveHandlers {
  event(e: LiveEvent): void;
  /**
   * Events may have been missed: connected again after a drop, or the server ended a stream we
   * still follow (its resync signal, docs/events.md). State must be reread.
   */
  resync(): void;
  status(s: 'online' | 'connecting'): void;
  /** The session ended (4401), or the server refuses the socket: sign in again. */
  sessionEnded(): void;
  /** A workspace stream was refused: the person left or was removed, or it was deleted. */
  workspaceEnded(serverId: string): void;
  /** Asked after a failed connection attempt: is the session still good? */
  checkSession(): Promise<boolean>;
}

/** A stream the server ended this soon after it began is renewed after a pause, not at once. */
const QUICK_END_MS = 2_000;
/** Streams the server ends together are reread once, this long after the first. */
const RESYNC_GATHER_MS = 200;

interface Sub {
  stop(): void;
  startedAt: number;
  /** Ends in a row that each came within QUICK_END_MS of their start, or after a refusal. */
  quickEnds: number;
  /** The server answered it with an error (then `complete`). */
  refused: boolean;
}

export class Live {
  private readonly client: Client;
  private readonly subs = new Map<string, Sub>();
  private resyncTimer: ReturnType<typeof setTimeout> | undefined;
  private connectedBefore = false;
  private closedByUs = false;

  /** `withHosts`: the server is a relay, so relayStream is asked for each event's host. */
  constructor(
    private readonly h: LiveHandlers,
    withHosts = false,
  ) {
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws`;
    let pongTimer: ReturnType<typeof setTimeout> | undefined;
    let socket: WebSocket | null = null;
    this.client = createClient({
      url,
      lazy: false,
      keepAlive: 20_000,
      retryAttempts: Infinity,
      // Every drop is retried (with backoff) except a session that ended.
      shouldRetry: (e) => !(isClose(e) && e.code === 4401),
      retryWait: async (retries) => {
        // A refused upgrade (401 after sign-out elsewhere) looks like any drop: ask over HTTP.
        if (retries > 0 && !(await h.checkSession().catch(() => true))) {
          this.closedByUs = true;
          h.sessionEnded();
          throw new Error('signed out');
        }
        const ms = Math.min(8_000, 500 * 2 ** retries) * (0.5 + Math.random() / 2);
        await new Promise((r) => setTimeout(r, ms));
      },
      onNonLazyError: () => undefined,
      on: {
        connecting: () => h.status('connecting'),
        connected: (s) => {
          socket = s as WebSocket;
          h.status('online');
          if (this.connectedBefore) h.resync();
          this.connectedBefore = true;
        },
        ping: (received) => {
          if (received) return;
          // No pong within 10 s: the connection is dead even if the socket says otherwise.
          pongTimer = setTimeout(() => {
            if (socket?.readyState === WebSocket.OPEN) socket.close(4408, 'pong timeout');
          }, 10_000);
        },
        pong: (received) => {
          if (received) clearTimeout(pongTimer);
        },
        closed: (e) => {
          if (this.closedByUs) return;
          h.status('connecting');
          if (isClose(e) && e.code === 4401) h.sessionEnded();
        },
      },
    });
    const query = withHosts ? RELAY_HOSTS : RELAY;
    this.subscribe('relay', query, {}, (d) => (d as { relayStream: LiveEvent }).relayStream);
  }

  /** Rereads the state once for every stream the server ends within RESYNC_GATHER_MS. */
  private resyncSoon(): void {
    if (this.resyncTimer !== undefined) return;
    this.resyncTimer = setTimeout(() => {
      this.resyncTimer = undefined;
      if (!this.closedByUs) this.h.resync();
    }, RESYNC_GATHER_MS);
  }

  /** Follows one workspace's stream (the direct space included). Idempotent. */
  follow(serverId: string): void {
    this.subscribe(
      `w:${serverId}`,
      WORKSPACE,
      { serverId },
      (d) => (d as { workspaceEvents: LiveEvent }).workspaceEvents,
      () => this.h.workspaceEnded(serverId),
    );
  }

  unfollow(serverId: string): void {
    const sub = this.subs.get(`w:${serverId}`);
    this.subs.delete(`w:${serverId}`);
    sub?.stop();
  }

  private subscribe(
    key: string,
    query: string,
    variables: Record<string, unknown>,
    pick: (data: unknown) => LiveEvent,
    ended?: () => void,
    quickEnds = 0,
  ): void {
    if (this.subs.has(key)) return;
    const sub: Sub = { stop: () => {}, startedAt: Date.now(), quickEnds, refused: false };
    sub.stop = this.client.subscribe(
      { query, variables },
      {
        next: (r) => {
          if (r.data) this.h.event(pick(r.data));
          // A coded refusal is one result with an error, then `complete` (docs/realtime.md).
          if (!r.errors?.length || this.subs.get(key) !== sub) return;
          sub.refused = true;
          if (r.errors.some((e) => errorCode(e) === 'NOT_FOUND')) {
            // No longer a member: the workspace was left or deleted while its event was missed.
            this.subs.delete(key);
            ended?.();
          }
        },
        error: () => {
          if (this.subs.get(key) === sub) this.subs.delete(key);
        },
        complete: () => {
          if (this.subs.get(key) !== sub || this.closedByUs) return;
          this.subs.delete(key);
          // The server ended a stream we still follow: its resync signal (after a Redis outage,
          // or events published late by another process), or a refusal that may pass
          // (TOO_MANY_SUBSCRIPTIONS). Events may have been missed: subscribe again, then read
          // again what is shown. A stream that ended because the person left was unfollowed by
          // that event first; if the event was missed, subscribing again is refused (NOT_FOUND).
          const quick =
            sub.refused || Date.now() - sub.startedAt < QUICK_END_MS ? sub.quickEnds + 1 : 0;
          const again = () => {
            if (this.closedByUs || this.subs.has(key)) return;
            this.subscribe(key, query, variables, pick, ended, quick);
            this.resyncSoon();
          };
          if (quick === 0) again();
          else setTimeout(again, Math.min(8_000, 250 * 2 ** quick));
        },
      },
    );
    this.subs.set(key, sub);
  }

  dispose(): void {
    this.closedByUs = true;
    clearTimeout(this.resyncTimer);
    const subs = [...this.subs.values()];
    this.subs.clear();
    for (const sub of subs) sub.stop();
    void this.client.dispose();
  }
}

function isClose(e: unknown): e is { code: number; reason: string } {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'number';
}

function errorCode(e: unknown): unknown {
  if (typeof e !== 'object' || e === null || !('extensions' in e)) return undefined;
  const ext = e.extensions;
  return typeof ext === 'object' && ext !== null && 'code' in ext ? ext.code : undefined;
}
