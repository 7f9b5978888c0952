import type { Logger } from 'pino';

import type { Db } from '../db/database.js';
import type { BusEvent, EventBus } from '../events/bus.js';
import type { LiveStream } from '../events/live-stream.js';
import { RelayStream } from '../services/realtime/relay-stream.js';
import { WorkspaceStream } from '../services/realtime/workspace-stream.js';

import { UpstreamError, type S2sClient } from './s2s-client.js';

/** One event as it travels from a host to a relay (docs/federation.md, "Events"). */
export interface RelayedEvent {
  type: string;
  at: number;
  payload: Record<string, unknown>;
}

interface Bridge {
  relay: string;
  user: string;
  /** Workspace id (or `user`) -> the stream and its bus subscription. */
  streams: Map<string, { stream: LiveStream; unsubscribe: () => void }>;
}

/**
 * Host side of `relayStream` for people from other servers: for each such person it holds the
 * same streams a WebSocket subscriber here would (their own topic and each workspace they are
 * in, authorized the same way), and sends what those streams deliver to the person's relay as
 * signed `POST /s2s/v1/events`, in order per person. Events are live, not stored: a relay that
 * is down misses them, as a disconnected WebSocket client does, and catches up by reading.
 */
export class EventBridge {
  private readonly bridges = new Map<string, Bridge>();
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly deps: { db: Db; bus: EventBus; client: S2sClient; log: Logger }) {}

  /**
   * Opens the streams of a person from another server that are not open yet (their own topic,
   * and each workspace they are a member of); closes those of workspaces they left.
   */
  async refresh(accountId: string, relay: string, user: string): Promise<void> {
    let bridge = this.bridges.get(accountId);
    if (!bridge) {
      bridge = { relay, user, streams: new Map() };
      this.bridges.set(accountId, bridge);
      this.open(accountId, bridge, 'user', new RelayStream(accountId));
    }
    const rows = await this.deps.db.kysely
      .selectFrom('workspace_member')
      .select('workspaceId')
      .where('accountId', '=', accountId)
      .execute();
    const ids = new Set(rows.map((r) => r.workspaceId));
    for (const id of ids) {
      if (bridge.streams.has(id)) continue;
      try {
        this.open(accountId, bridge, id, await WorkspaceStream.open(this.deps.db, accountId, id));
      } catch (err) {
        this.deps.log.warn({ err, accountId, workspaceId: id }, 'event bridge: stream not opened');
      }
    }
    for (const [key, s] of bridge.streams) {
      if (key !== 'user' && !ids.has(key)) {
        s.unsubscribe();
        bridge.streams.delete(key);
      }
    }
  }

  /** Whether a person's events are being sent to their relay. */
  isOpen(accountId: string): boolean {
    return this.bridges.has(accountId);
  }

  /** Ends every stream of a person (revoked or blocked). */
  close(accountId: string): void {
    const bridge = this.bridges.get(accountId);
    if (!bridge) return;
    for (const s of bridge.streams.values()) s.unsubscribe();
    this.bridges.delete(accountId);
  }

  closeAll(): void {
    for (const id of [...this.bridges.keys()]) this.close(id);
  }

  private open(accountId: string, bridge: Bridge, key: string, stream: LiveStream): void {
    const unsubscribe = this.deps.bus.subscribe(stream.topic, (event) => {
      void this.onEvent(accountId, bridge, key, stream, event);
    });
    bridge.streams.set(key, { stream, unsubscribe });
  }

  private async onEvent(
    accountId: string,
    bridge: Bridge,
    key: string,
    stream: LiveStream,
    event: BusEvent,
  ): Promise<void> {
    // Same order as the WebSocket fan-out: the topic policy first, then the stream's verdict.
    const queued = (this.queues.get(accountId) ?? Promise.resolve()).then(async () => {
      try {
        await stream.policy?.prepare(event, [stream]);
      } catch (err) {
        this.deps.log.error({ err, type: event.type }, 'event bridge: membership refresh failed');
      }
      const verdict = stream.decide(event);
      if (verdict === 'end' || verdict === 'deliver-end') {
        bridge.streams.get(key)?.unsubscribe();
        bridge.streams.delete(key);
      }
      if (verdict === 'deliver' || verdict === 'deliver-end') {
        await this.send(bridge, { type: event.type, at: event.at, payload: event.payload });
      }
    });
    this.queues.set(
      accountId,
      queued.catch(() => undefined),
    );
    await queued.catch(() => undefined);
  }

  private async send(bridge: Bridge, event: RelayedEvent): Promise<void> {
    const body = Buffer.from(JSON.stringify({ user: bridge.user, events: [event] }));
    try {
      const res = await this.deps.client.call(bridge.relay, {
        method: 'POST',
        path: 'events',
        headers: { 'content-type': 'application/json' },
        body,
      });
      if (res.status !== 200) {
        this.deps.log.warn(
          { relay: bridge.relay, status: res.status },
          'event bridge: relay refused',
        );
      }
    } catch (err) {
      const detail = err instanceof UpstreamError ? err.message : String(err);
      this.deps.log.warn({ relay: bridge.relay, detail }, 'event bridge: relay unreachable');
    }
  }
}
