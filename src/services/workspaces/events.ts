import type { Tx } from '../../db/transaction.js';
import type { EventPort } from '../../events/port.js';
import { workspaceTopic, type EventMap, type EventType } from '../../events/catalog.js';

/**
 * Publishes one catalog event on the workspace's topic after the transaction commits. Times in
 * payloads are RFC 3339 strings, like the GraphQL DateTime (docs/events.md).
 */
export function emitWorkspaceEvent<K extends EventType>(
  tx: Tx,
  events: EventPort,
  type: K,
  at: number,
  payload: EventMap[K],
): void {
  events.publishOnCommit(tx, { topic: workspaceTopic(payload.serverId), type, at, payload });
}
