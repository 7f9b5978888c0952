import type { Tx } from '../../db/transaction.js';
import type { EventBus } from '../../events/bus.js';
import { workspaceTopic, type EventMap, type EventType } from '../../events/catalog.js';
import { publishOnCommit } from '../../events/publish.js';

/**
 * Publishes one catalog event on the workspace's topic after the transaction commits. Times in
 * payloads are RFC 3339 strings, like the GraphQL DateTime (docs/events.md).
 */
export function emitWorkspaceEvent<K extends EventType>(
  tx: Tx,
  bus: EventBus,
  type: K,
  at: number,
  payload: EventMap[K],
): void {
  publishOnCommit(tx, bus, { topic: workspaceTopic(payload.serverId), type, at, payload });
}
