import type { Tx } from '../db/transaction.js';

import type { BusEvent, EventBus } from './bus.js';

/**
 * Publishes an event once the transaction has committed; a rolled-back change publishes
 * nothing. A publish failure is logged by the transaction's error hook, never undoing the write.
 */
export function publishOnCommit(tx: Tx, bus: EventBus, event: BusEvent): void {
  tx.onCommit(() => bus.publish(event));
}
