import { useEffect, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { NOTIFICATIONS } from '../api/notification-queries.ts';
import type { AppNotification, NotificationKind } from '../api/types.ts';
import {
  markAllNotificationsRead,
  markNotificationRead,
  notificationsChanged,
  unreadNotifications,
} from '../state/notifications.ts';
import { putConversations, rememberUsers, titleOf, workspaces } from '../state/store.ts';
import { inboxOpen } from '../state/view.ts';

import { Dialog } from './dialog.tsx';
import { fullTime } from './format.tsx';
import { jumpToMessage } from './jump-to-message.ts';
import { PushOffer } from './notify/push-offer.tsx';
import { ErrorText, showError } from './toasts.tsx';

const WHY: Record<NotificationKind, string> = {
  MENTION: 'mentioned you',
  CHANNEL: 'notified the channel',
  KEYWORD: 'used one of your keywords',
  THREAD_REPLY: 'replied in a thread',
  DIRECT: 'sent you a message',
  MESSAGE: 'wrote',
};

interface Page {
  items: AppNotification[];
  hasMore: boolean;
  nextCursor: string | null;
  unreadCount: number;
}

/** One line of the message: the first 200 characters, or what stands for an encrypted one. */
function excerpt(n: AppNotification): string {
  if (n.encrypted) return 'An encrypted message (open it to read it).';
  const text = n.message?.text ?? '';
  if (!n.message || n.message.isDeleted) return 'This message was deleted.';
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * The notifications inbox: mentions, replies in threads, keyword hits and direct messages,
 * newest first, unread ones marked; choosing one opens the message and marks it read.
 */
export default function Inbox() {
  const [unreadOnly, setUnreadOnly] = useState(true);
  const [items, setItems] = useState<AppNotification[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const close = () => (inboxOpen.value = false);

  const load = async (before: string | null) => {
    try {
      const d = await gql<{ notifications: Page }>(NOTIFICATIONS, { before, unreadOnly });
      const page = d.notifications;
      rememberUsers(page.items.map((n) => n.actor));
      putConversations(page.items.flatMap((n) => (n.conversation ? [n.conversation] : [])));
      setItems((had) => (before && had ? [...had, ...page.items] : page.items));
      setNext(page.hasMore ? page.nextCursor : null);
      unreadNotifications.value = page.unreadCount;
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  // Read again when the filter changes and when notifications arrive or are read elsewhere.
  useEffect(() => {
    void load(null);
  }, [unreadOnly, notificationsChanged.value]);

  const open = (n: AppNotification) => {
    close();
    if (!n.read) void markNotificationRead(n.id, n.conversationId).catch(showError);
    void jumpToMessage({
      id: n.messageId,
      conversationId: n.conversationId,
      threadRootId: n.threadRootId,
    });
  };

  const count = unreadNotifications.value;
  return (
    <Dialog title="Notifications" onClose={close} wide>
      <div class="inbox-tools">
        <label class="check">
          <input
            type="checkbox"
            checked={unreadOnly}
            onChange={(e) => setUnreadOnly(e.currentTarget.checked)}
          />
          <span>Unread only</span>
        </label>
        <p role="status" class="muted">
          {count ? `${count} unread` : 'Nothing unread.'}
        </p>
        <button
          type="button"
          disabled={!count}
          onClick={() => void markAllNotificationsRead().catch(showError)}
        >
          Mark all read
        </button>
      </div>
      <PushOffer compact />
      <ErrorText error={error} />
      {items === null && !error && <p class="loading">Loading…</p>}
      {items && items.length === 0 && (
        <p class="empty">
          {unreadOnly
            ? 'You are all caught up.'
            : 'No notifications yet. Mentions, replies and keywords show here.'}
        </p>
      )}
      {items && items.length > 0 && (
        <ul class="plain inbox-list" aria-label="Notifications">
          {items.map((n) => (
            <InboxItem key={n.id} n={n} onOpen={() => open(n)} />
          ))}
        </ul>
      )}
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Older notifications
        </button>
      )}
    </Dialog>
  );
}

function InboxItem({ n, onOpen }: { n: AppNotification; onOpen: () => void }) {
  const who = n.actor ? (n.actor.displayName ?? n.actor.username) : 'Someone';
  const c = n.conversation;
  const w = c && workspaces.value.find((x) => x.id === c.serverId);
  const where = c ? `${titleOf(c)}${w && !w.isDirect ? ` · ${w.name}` : ''}` : 'a conversation';
  return (
    <li class={n.read ? 'inbox-item' : 'inbox-item unread'}>
      <button type="button" class="hit" onClick={onOpen}>
        <span class="small" dir="auto">
          {!n.read && <span class="visually-hidden">Unread: </span>}
          <strong>{who}</strong> {WHY[n.kind]} in {where}
          {n.threadRootId && n.kind !== 'THREAD_REPLY' ? ' (in a thread)' : ''} ·{' '}
          <span class="muted">{fullTime(n.createdAt)}</span>
        </span>
        <span class="hit-text" dir="auto">
          {excerpt(n)}
        </span>
      </button>
      {!n.read && (
        <button
          type="button"
          class="small"
          aria-label={`Mark read: ${who} in ${where}`}
          onClick={() => void markNotificationRead(n.id, n.conversationId).catch(showError)}
        >
          Mark read
        </button>
      )}
    </li>
  );
}
