import type { CompiledQuery } from 'kysely';

import type { Tx } from '../db/transaction.js';

import type { BusEvent, EventBus } from './bus.js';
import type { EventMap, EventType } from './catalog.js';
import { outboxOf } from './outbox.js';

/**
 * Publishes an event once the transaction has committed; a rolled-back change publishes
 * nothing. The event is written to the outbox in the same transaction (outbox.ts), so it is
 * delivered even when this process cannot publish it (the command line, a crash after commit).
 * A publish failure is logged by the transaction's error hook, never undoing the write.
 */
export function publishOnCommit(tx: Tx, bus: EventBus, event: BusEvent): void {
  outboxOf(bus).publishOnCommit(tx, event);
}

/**
 * Publishes one catalog event on `topic` after `tx` commits, its payload checked against the
 * kind (`EventMap`). `at` is the event's time in milliseconds (the service's clock). Every
 * emitter takes (where, type, at, payload) in this order: `emitWorkspaceEvent` (the workspace's
 * topic), `emitConversationEvent` and `emitToUsers` (services/conversations/events.ts).
 */
export function emit<K extends EventType>(
  tx: Tx,
  bus: EventBus,
  topic: string,
  type: K,
  at: number,
  payload: EventMap[K],
): void {
  publishOnCommit(tx, bus, { topic, type, at, payload: payload as Record<string, unknown> });
}

/**
 * Runs `write` (an update or delete returning a row per row it changed) and publishes `event`
 * only when it changed a row, the two committed together (Outbox.publishIfChanged). Resolves to
 * whether it changed a row. Not inside a transaction: it is one.
 */
export function publishIfChanged(
  bus: EventBus,
  write: CompiledQuery,
  event: BusEvent,
): Promise<boolean> {
  return outboxOf(bus).publishIfChanged(write, event);
}
