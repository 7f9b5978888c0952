import { useEffect, useState } from 'preact/hooks';

import { ApiError, gqlAt } from '../api/graphql.ts';
import { NOTIFICATIONS } from '../api/notification-queries.ts';
import type { AppNotification, NotificationKind } from '../api/types.ts';
import { hostOfId, remoteHosts } from '../remote/routing.ts';
import {
  hostUnread,
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

/** Where the list goes on, by server (null for this one, else a host): the next page's cursor. */
type Cursors = Map<string | null, string>;

const newestFirst = (a: AppNotification, b: AppNotification) =>
  a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0;

/**
 * The notifications inbox: mentions, replies in threads, keyword hits and direct messages,
 * newest first, unread ones marked; choosing one opens the message and marks it read. Those of
 * each host the person uses are read from it through the relay and shown among this server's.
 */
export default function Inbox() {
  const [unreadOnly, setUnreadOnly] = useState(true);
  const [items, setItems] = useState<AppNotification[] | null>(null);
  const [next, setNext] = useState<Cursors | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [hostError, setHostError] = useState<unknown>(null);
  const close = () => (inboxOpen.value = false);

  // A page from each server at once (the next page of each that has more), merged newest first.
  const load = async (more: Cursors | null) => {
    const servers = more ? [...more.keys()] : [null, ...remoteHosts.value];
    try {
      const pages = await Promise.all(
        servers.map(async (server) => {
          const before = more?.get(server) ?? null;
          try {
            const d = await gqlAt<{ notifications: Page }>(server, NOTIFICATIONS, {
              before,
              unreadOnly,
            });
            return { server, page: d.notifications, failed: null };
          } catch (err) {
            // This server's refusal is the inbox's; a host's leaves the others to show.
            if (server === null || !(err instanceof ApiError)) throw err;
            return { server, page: null, failed: err };
          }
        }),
      );
      const got = pages.flatMap((p) => p.page?.items ?? []);
      rememberUsers(got.map((n) => n.actor));
      putConversations(got.flatMap((n) => (n.conversation ? [n.conversation] : [])));
      setItems((had) => [...(more && had ? had : []), ...got].sort(newestFirst));
      const cursors: Cursors = new Map();
      for (const p of pages) {
        if (p.page?.hasMore && p.page.nextCursor) cursors.set(p.server, p.page.nextCursor);
      }
      setNext(cursors.size ? cursors : null);
      if (!more) {
        let count = 0;
        for (const p of pages) {
          if (p.page && p.server) hostUnread.set(p.server, p.page.unreadCount);
          count += p.page ? p.page.unreadCount : (hostUnread.get(p.server ?? '') ?? 0);
        }
        unreadNotifications.value = count;
      }
      setHostError(pages.find((p) => p.failed)?.failed ?? null);
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
      <ErrorText error={hostError} />
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
  const host = hostOfId(n.id);
  const place = w && !w.isDirect ? ` · ${w.name}` : '';
  const where = c ? `${titleOf(c)}${place}${host ? ` on ${host}` : ''}` : 'a conversation';
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
