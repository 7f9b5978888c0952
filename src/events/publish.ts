import type { Tx } from '../db/transaction.js';

import type { EventMap, EventType } from './catalog.js';
import type { EventPort } from './port.js';

/**
 * Publishes one catalog event on `topic` after `tx` commits, its payload checked against the
 * kind (`EventMap`). `at` is the event's time in milliseconds (the service's clock). Every
 * emitter takes (where, type, at, payload) in this order: `emitWorkspaceEvent` (the workspace's
 * topic), `emitConversationEvent` and `emitToUsers` (services/conversations/events.ts).
 */
export function emit<K extends EventType>(
  tx: Tx,
  events: EventPort,
  topic: string,
  type: K,
  at: number,
  payload: EventMap[K],
): void {
  events.publishOnCommit(tx, { topic, type, at, payload: payload as Record<string, unknown> });
}
