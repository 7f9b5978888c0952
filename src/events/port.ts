import type { CompiledQuery } from 'kysely';

import type { Tx } from '../db/transaction.js';

import type { BusEvent } from './bus.js';

/**
 * What services publish their events through: the outbox (outbox.ts), built once with the bus by
 * the composition root and handed to every area in its dependencies (`events`). An event is
 * written in the transaction that raised it and published after the commit; a rolled-back change
 * publishes nothing. Events with no row (typing, presence, cache drops) go on the bus directly.
 */
export interface EventPort {
  /**
   * Writes `event` with `tx` and publishes it once `tx` has committed. A publish failure is logged
   * by the transaction's error hook, never undoing the write.
   */
  publishOnCommit(tx: Tx, event: BusEvent): void;
  /**
   * Runs `write` (an update or delete returning a row per row it changed) and publishes `event`
   * only when it changed a row, the two committed together. Resolves to whether it changed a row.
   * Not inside a transaction: it is one.
   */
  publishIfChanged(write: CompiledQuery, event: BusEvent): Promise<boolean>;
}
