import { createHash } from 'node:crypto';

import type { Logger } from 'pino';

import type { Db } from '../db/database.js';
import type { Clock } from '../lib/clock.js';
import type { BusEvent, EventBus } from '../events/bus.js';
import type { LiveStream } from '../events/live-stream.js';
import { RelayStream, WorkspaceStream } from '../services/realtime/index.js';

import type { EventDelivery, RemotePerson } from './event-delivery.js';

interface Bridge {
  person: RemotePerson;
  /** Workspace id (or `user`) -> the stream and its bus subscription. */
  streams: Map<string, { stream: LiveStream; unsubscribe: () => void }>;
}

/**
 * An event's id, the same on every process that hears it: a digest of its topic, kind, time and
 * payload (two different events never share all four; docs/events.md, "Delivery"). A copy the
 * outbox publishes again gets the same id, so it is recorded once too.
 */
export function relayedEventId(event: BusEvent): string {
  return createHash('sha256')
    .update(canonicalJson([event.topic, event.type, event.at, event.payload]))
    .digest('base64url');
}

/** JSON with object keys sorted (and undefined members left out, as JSON.stringify does). */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
    .join(',')}}`;
}

/**
 * Host side of `relayStream` for people from other servers: for each such person it holds the
 * same streams a WebSocket subscriber here would (their own topic and each workspace they are
 * in, authorized the same way), and records what those streams deliver for the person's relay
 * (EventDelivery stores and sends them, in order per person). Several processes may each hold a
 * person's streams; each event is still recorded, and sent, once.
 */
export class EventBridge {
  private readonly bridges = new Map<string, Bridge>();
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      db: Db;
      bus: EventBus;
      delivery: EventDelivery;
      log: Logger;
      clock: Clock;
    },
  ) {}

  /**
   * Opens the streams of a person from another server that are not open yet (their own topic,
   * and each workspace they are a member of); closes those of workspaces they left.
   */
  async refresh(accountId: string, relay: string, user: string): Promise<void> {
    let bridge = this.bridges.get(accountId);
    if (!bridge) {
      bridge = { person: { accountId, relay, user }, streams: new Map() };
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
        const stream = await WorkspaceStream.open(this.deps.db, accountId, id, {
          joinedChannelsOnly: false,
          now: () => this.deps.clock.now().getTime(),
        });
        this.open(accountId, bridge, id, stream);
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

  /** Ends every stream of a person (revoked or blocked) and drops their undelivered events. */
  close(accountId: string): void {
    this.closeStreams(accountId);
    this.deps.delivery
      .discard(accountId)
      .catch((err: unknown) => this.deps.log.warn({ err, accountId }, 'events not discarded'));
  }

  /** Ends every stream of a person here, keeping what was recorded for them. */
  closeStreams(accountId: string): void {
    const bridge = this.bridges.get(accountId);
    if (!bridge) return;
    for (const s of bridge.streams.values()) s.unsubscribe();
    this.bridges.delete(accountId);
  }

  closeAll(): void {
    for (const id of [...this.bridges.keys()]) this.closeStreams(id);
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
        const relayed = {
          id: relayedEventId(event),
          type: event.type,
          at: event.at,
          payload: event.payload,
        };
        try {
          await this.deps.delivery.record(bridge.person, relayed);
        } catch (err) {
          this.deps.log.error({ err, type: event.type }, 'event bridge: event not recorded');
        }
      }
    });
    this.queues.set(
      accountId,
      queued.catch(() => undefined),
    );
    await queued.catch(() => undefined);
  }
}
