import type { ConversationTable } from '../../db/tables/conversations.js';
import type { Tx } from '../../db/transaction.js';
import type { BusEvent } from '../../events/bus.js';
import {
  userTopic,
  workspaceTopic,
  type Audience,
  type EventFields,
  type EventType,
} from '../../events/catalog.js';
import type { EventPort } from '../../events/port.js';

// Where conversation and message events go (docs/events.md, "Conversations and messages"):
// - a channel's events go to its workspace topic, with audience `channel` (public) or
//   `conversation` (private);
// - a direct or group conversation's events go to the user topic of each person concerned
//   (`recipients`: its members, and invitees where the event is about them), audience
//   `conversation`.

type Conv = Pick<ConversationTable, 'id' | 'workspaceId' | 'kind' | 'isPrivate'>;

/** Publishes one event about a conversation after the transaction commits. */
export function emitConversationEvent<K extends EventType>(
  tx: Tx,
  events: EventPort,
  conv: Conv,
  recipients: readonly string[],
  type: K,
  at: number,
  fields: EventFields[K],
): void {
  const payload = { ...fields, serverId: conv.workspaceId, conversationId: conv.id };
  if (conv.kind === 'channel') {
    const audience: Audience =
      conv.isPrivate === 1
        ? { kind: 'conversation', conversationId: conv.id }
        : { kind: 'channel', conversationId: conv.id };
    events.publishOnCommit(tx, {
      topic: workspaceTopic(conv.workspaceId),
      type,
      at,
      payload: { ...payload, audience },
    });
    return;
  }
  const audience: Audience = { kind: 'conversation', conversationId: conv.id };
  for (const id of new Set(recipients)) {
    events.publishOnCommit(tx, {
      topic: userTopic(id),
      type,
      at,
      payload: { ...payload, audience },
    });
  }
}

/**
 * Publishes an event only the listed people may see (read markers, an invitation to the
 * invitee): their user topics for the direct space, the workspace topic with audience `users`
 * for a channel.
 */
export function emitToUsers<K extends EventType>(
  tx: Tx,
  events: EventPort,
  conv: Pick<ConversationTable, 'id' | 'workspaceId' | 'kind'>,
  userIds: readonly string[],
  type: K,
  at: number,
  fields: EventFields[K],
): void {
  for (const event of eventsToUsers(conv, userIds, type, at, fields)) {
    events.publishOnCommit(tx, event);
  }
}

/** The events `emitToUsers` publishes: one on the workspace topic, or one per user topic. */
export function eventsToUsers<K extends EventType>(
  conv: Pick<ConversationTable, 'id' | 'workspaceId' | 'kind'>,
  userIds: readonly string[],
  type: K,
  at: number,
  fields: EventFields[K],
): BusEvent[] {
  const audience: Audience = { kind: 'users', userIds: [...userIds] };
  const payload: Record<string, unknown> = {
    ...fields,
    serverId: conv.workspaceId,
    conversationId: conv.id,
    audience,
  };
  if (conv.kind === 'channel') {
    return [{ topic: workspaceTopic(conv.workspaceId), type, at, payload }];
  }
  return [...new Set(userIds)].map((id) => ({ topic: userTopic(id), type, at, payload }));
}
