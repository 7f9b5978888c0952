import { signal } from '@preact/signals';

import { gql, gqlAt, gqlBatch } from '../api/graphql.ts';
import {
  MARK_ALL_NOTIFICATIONS_READ,
  MARK_NOTIFICATION_READ,
  UNREAD_IN_CONVERSATION,
  UNREAD_NOTIFICATIONS,
} from '../api/notification-queries.ts';

import { remoteHosts } from '../remote/routing.ts';

import { conversations, patchConversation } from './store.ts';
import { reading, sidePane } from './view.ts';

// The person's notifications (docs/notifications.md): how many are unread in all, for the
// inbox button, and each conversation's `mentionCount` kept current by the live events. Each
// host of a workspace or conversation of the person keeps their notifications there; they are
// read through the relay and counted with this server's (docs/web-client.md).

/** Unread notifications in all (the inbox button's badge). */
export const unreadNotifications = signal(0);
/** Goes up by one on every change the inbox should show (a new one, some read). */
export const notificationsChanged = signal(0);

let counting: Promise<void> | null = null;
/** A read of the count was asked for while one was under way: it runs again after. */
let countAgain = false;
/** Live changes of the count made here (a new notification counted as it arrived). */
let liveChanges = 0;
/** Each host's unread count at its last answer: a host that cannot be reached keeps its share. */
export const hostUnread = new Map<string, number>();

/** A host's unread count, or its last one when it cannot be reached. */
function unreadAt(host: string): Promise<number> {
  return gqlAt<{ notifications: { unreadCount: number } }>(host, UNREAD_NOTIFICATIONS)
    .then((d) => {
      hostUnread.set(host, d.notifications.unreadCount);
      return d.notifications.unreadCount;
    })
    .catch(() => hostUnread.get(host) ?? 0);
}

/** This server's count and each host's, summed. */
async function readCount(): Promise<number> {
  const counts = await Promise.all([
    gql<{ notifications: { unreadCount: number } }>(UNREAD_NOTIFICATIONS).then(
      (d) => d.notifications.unreadCount,
    ),
    ...remoteHosts.value.map(unreadAt),
  ]);
  return counts.reduce((a, b) => a + b, 0);
}

/** Reads before an answer is taken as it is, when live changes keep overtaking the reads. */
const COUNT_TRIES = 3;

/**
 * Reads the unread count again (after a read marker moved, or events may be missing): this
 * server's and each host's. An answer overtaken by a live change (a notification counted while
 * the read was under way, which the answer may not hold) is not shown: the count is read again.
 * A call made while a read is under way is answered by a read that starts after it.
 */
export function refreshNotificationCount(): Promise<void> {
  countAgain = true;
  counting ??= (async () => {
    try {
      for (let tries = 0; countAgain;) {
        countAgain = false;
        const seen = liveChanges;
        const total = await readCount();
        if (liveChanges !== seen && ++tries < COUNT_TRIES) {
          countAgain = true;
          continue;
        }
        unreadNotifications.value = total;
      }
    } catch {
      // The badge keeps its count; the next event or reconnect reads it again.
    } finally {
      counting = null;
      countAgain = false;
    }
  })();
  return counting;
}

/** `NotificationCreated`: one more unread, in all and in its conversation. */
export function notificationCreated(n: {
  id?: unknown;
  conversationId?: unknown;
  threadRootId?: unknown;
}): void {
  notificationsChanged.value++;
  const conv = typeof n.conversationId === 'string' ? n.conversationId : null;
  // A reply in the thread open on screen is read as it arrives.
  if (conv && typeof n.id === 'string' && readingThread(conv, n.threadRootId)) {
    void gql(MARK_NOTIFICATION_READ, { id: n.id }).catch(() => undefined);
    return;
  }
  // A message of the conversation on screen is read as it arrives (the read marker moves).
  if (conv && !n.threadRootId && reading(conv)) {
    void refreshNotificationCount();
    return;
  }
  unreadNotifications.value++;
  liveChanges++;
  const c = conv ? conversations.value[conv] : undefined;
  if (conv && c) patchConversation(conv, { mentionCount: (c.mentionCount ?? 0) + 1 });
}

/** `NotificationsRead` (here or on another device): the counts are read again. */
export function notificationsRead(p: { conversationId?: unknown; all?: unknown }): void {
  notificationsChanged.value++;
  if (p.all === true) {
    for (const c of Object.values(conversations.value)) {
      if (c.mentionCount) patchConversation(c.id, { mentionCount: 0 });
    }
  } else if (typeof p.conversationId === 'string') {
    patchConversation(p.conversationId, { mentionCount: 0 });
  }
  void refreshNotificationCount();
}

export async function markNotificationRead(id: string, conversationId: string): Promise<void> {
  await gql(MARK_NOTIFICATION_READ, { id });
  const c = conversations.value[conversationId];
  if (c?.mentionCount) patchConversation(conversationId, { mentionCount: c.mentionCount - 1 });
  await refreshNotificationCount();
}

function readingThread(conversationId: string, rootId: unknown): boolean {
  const pane = sidePane.value;
  return (
    typeof rootId === 'string' &&
    pane?.kind === 'thread' &&
    pane.rootId === rootId &&
    reading(conversationId)
  );
}

/**
 * Opening a thread reads its replies' notifications (the read marker reads only the
 * conversation's own messages), so the conversation's badge does not stay for replies seen.
 */
export async function readThreadNotifications(conversationId: string, rootId: string) {
  if (!conversations.value[conversationId]?.mentionCount) return;
  const d = await gql<{ notifications: { items: { id: string; threadRootId: string | null }[] } }>(
    UNREAD_IN_CONVERSATION,
    { id: conversationId },
  );
  // A batch holds at most 20 requests (contract); more replies than that wait for the next open.
  const ids = d.notifications.items
    .filter((n) => n.threadRootId === rootId)
    .map((n) => n.id)
    .slice(0, 20);
  if (!ids.length) return;
  await gqlBatch(ids.map((id) => ({ query: MARK_NOTIFICATION_READ, variables: { id } })));
  const c = conversations.value[conversationId];
  if (c)
    patchConversation(conversationId, { mentionCount: Math.max(0, c.mentionCount - ids.length) });
  await refreshNotificationCount();
}

/** Marks every notification read, here and on each host (one that cannot be reached says so). */
export async function markAllNotificationsRead(): Promise<void> {
  const hosts = await Promise.allSettled(
    remoteHosts.value.map((host) => gqlAt(host, MARK_ALL_NOTIFICATIONS_READ)),
  );
  await gql(MARK_ALL_NOTIFICATIONS_READ);
  notificationsRead({ all: true });
  const failed = hosts.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
