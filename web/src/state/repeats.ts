import type { LiveEvent } from '../api/types.ts';

/** Kinds published straight to the bus, never through the outbox: never repeated. */
const DIRECT = new Set(['TypingStarted', 'PresenceChanged', 'PresencesChanged']);

/**
 * Remembers the envelopes of the events applied lately, to skip a repeat. Delivery is at least
 * once (docs/events.md, "Delivery"): after a server crash the same event may arrive twice, with
 * the same envelope, while two different events never share one (their time, ids or fields
 * differ). Counters (reactions, members, replies) would otherwise count a repeat twice.
 */
export class RecentEvents {
  private readonly keys = new Set<string>();

  constructor(private readonly max = 1000) {}

  /** True when `e` was seen already; otherwise remembers it (the oldest are forgotten). */
  repeated(e: LiveEvent): boolean {
    if (DIRECT.has(e.type)) return false;
    const key = JSON.stringify([e.type, e.at, e.serverId, e.conversationId, e.payload]);
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value as string);
    return false;
  }
}
