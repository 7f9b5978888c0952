import { createClient, type Client } from 'graphql-ws/client';

import type { LiveEvent } from './types.ts';

// Live events over GET /api/ws (subprotocol graphql-transport-ws). The cookie authenticates the
// upgrade; the connection lives no longer than the session (close 4401 `session ended`).

const EVENT = `type serverId conversationId at payload`;
const RELAY = `subscription RelayStream { relayStream { ${EVENT} } }`;
const WORKSPACE = `subscription WorkspaceEvents($serverId: ID!) { workspaceEvents(serverId: $serverId) { ${EVENT} } }`;

export interface LiveHandlers {
  event(e: LiveEvent): void;
  /** Connected again after a drop: events in between were missed, so state must be reread. */
  resync(): void;
  status(s: 'online' | 'connecting'): void;
  /** The session ended (4401), or the server refuses the socket: sign in again. */
  sessionEnded(): void;
  /** A workspace stream ended (the person left or was removed, or it was deleted). */
  workspaceEnded(serverId: string): void;
  /** Asked after a failed connection attempt: is the session still good? */
  checkSession(): Promise<boolean>;
}

export class Live {
  private readonly client: Client;
  private readonly subs = new Map<string, () => void>();
  private connectedBefore = false;
  private closedByUs = false;

  constructor(private readonly h: LiveHandlers) {
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
    this.subscribe('relay', RELAY, {}, (d) => (d as { relayStream: LiveEvent }).relayStream);
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
    const stop = this.subs.get(`w:${serverId}`);
    this.subs.delete(`w:${serverId}`);
    stop?.();
  }

  private subscribe(
    key: string,
    query: string,
    variables: Record<string, unknown>,
    pick: (data: unknown) => LiveEvent,
    ended?: () => void,
  ): void {
    if (this.subs.has(key)) return;
    const stop = this.client.subscribe(
      { query, variables },
      {
        next: (r) => {
          if (r.data) this.h.event(pick(r.data));
        },
        error: () => {
          this.subs.delete(key);
        },
        complete: () => {
          if (!this.subs.has(key) || this.closedByUs) return;
          this.subs.delete(key);
          ended?.();
        },
      },
    );
    this.subs.set(key, stop);
  }

  dispose(): void {
    this.closedByUs = true;
    const stops = [...this.subs.values()];
    this.subs.clear();
    for (const stop of stops) stop();
    void this.client.dispose();
  }
}

function isClose(e: unknown): e is { code: number; reason: string } {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'number';
}
