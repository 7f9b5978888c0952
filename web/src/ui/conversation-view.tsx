import { useEffect, useLayoutEffect, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { JOIN_CHANNEL, LEAVE_CHANNEL, LEAVE_CONVERSATION, MARK_READ } from '../api/queries.ts';
import type { Conversation } from '../api/types.ts';
import { navigate, route } from '../state/router.ts';
import { onResync, refreshConversation, refreshPresence } from '../state/session.ts';
import {
  conversations,
  dropConversation,
  me,
  patchConversation,
  putConversations,
  titleOf,
  typing,
  workspaces,
} from '../state/store.ts';
import { conversationTimeline, type Timeline } from '../state/timeline.ts';
import { refreshNotificationCount } from '../state/notifications.ts';
import {
  atBottom,
  lastConversation,
  openConversation,
  pageTitle,
  sidePane,
} from '../state/view.ts';

import { Composer } from './composer.tsx';
import { PresenceDot, presenceWords } from './presence.tsx';
import { WorkspaceDialogs } from './sidebar.tsx';
import { TimelineView } from './timeline-view.tsx';
import { ErrorText, showError } from './toasts.tsx';
import { DrawerToggle } from './drawer-toggle.tsx';
import { confirmAction } from './confirm.tsx';
import { Icon } from './icons.tsx';
import { lazyScreen } from './lazy.tsx';
import { mutedNow } from './sidebar.tsx';
import { isInvitation } from '../e2ee/glue.ts';
import { isSelf } from '../remote/routing.ts';
import { EncryptedNote, Invitation, Lock } from '../e2ee/ui.tsx';

const ConversationNotify = lazyScreen(() => import('./notify/conversation-notify.tsx'));

/** The open conversation: its header, messages, who is typing, and the message box. */
export function ConversationView() {
  const r = route.value;
  const serverId = r.name === 'workspace' ? r.serverId : '';
  const id = r.name === 'workspace' ? r.conversationId : null;
  const c = id ? conversations.value[id] : undefined;
  const [missing, setMissing] = useState<unknown>(null);

  // No conversation named: open the first channel of the workspace.
  useEffect(() => {
    if (id) return;
    const first = Object.values(conversations.value)
      .filter((x) => x.serverId === serverId && x.isMember)
      .sort((a, b) =>
        a.kind === 'CHANNEL'
          ? (a.name ?? '').localeCompare(b.name ?? '')
          : a.lastActivityAt < b.lastActivityAt
            ? 1
            : -1,
      )[0];
    if (first)
      navigate({ name: 'workspace', serverId, conversationId: first.id }, { replace: true });
  }, [serverId, id]);

  useEffect(() => {
    setMissing(null);
    if (!id || conversations.value[id]) return;
    refreshConversation(id)
      .then((found) => {
        if (!found) setMissing(new Error('missing'));
      })
      .catch(setMissing);
  }, [id]);

  useEffect(() => {
    openConversation.value = id;
    if (id) lastConversation.value = id;
    return () => {
      openConversation.value = null;
    };
  }, [id]);

  if (!id) {
    return <p class="empty">{workspaces.value.length ? 'No conversation here yet.' : ''}</p>;
  }
  if (!c) {
    return missing ? (
      <p class="empty" role="alert">
        This conversation does not exist, or you cannot see it.{' '}
        <a href="/" onClick={(e) => (e.preventDefault(), navigate({ name: 'home' }))}>
          Go back
        </a>
      </p>
    ) : (
      <p class="loading">Loading…</p>
    );
  }
  return <Open key={c.id} c={c} />;
}

function Open({ c }: { c: Conversation }) {
  if (isInvitation(c)) {
    return (
      <section class="conversation" aria-labelledby="conv-title">
        <Header c={c} title={titleOf(c)} />
        <Invitation c={c} />
      </section>
    );
  }
  return <OpenMember c={c} />;
}

function OpenMember({ c }: { c: Conversation }) {
  const timeline = conversationTimeline(c.id);
  const title = titleOf(c);

  // The first page is asked for before the view is painted (an effect runs after the paint): the
  // request is on its way while the browser lays out the header and the composer.
  useLayoutEffect(() => {
    if (!timeline.ready.value || timeline.stale) void timeline.open();
  }, [c.id]);

  useEffect(() => {
    onResync(() => void timeline.open());
    void refreshConversation(c.id).then(() => {
      const conv = conversations.value[c.id];
      if (conv && conv.kind !== 'CHANNEL') void refreshPresence(conv.memberIds);
    });
    pageTitle.value = title;
    return () => onResync(null);
  }, [c.id]);

  useMarkRead(c, timeline);

  return (
    <section class="conversation" aria-labelledby="conv-title">
      <Header c={c} title={title} />
      {timeline.error.value && !timeline.ready.value ? (
        <div class="empty">
          <ErrorText error={timeline.error.value} />
          <button type="button" onClick={() => void timeline.open()}>
            Try again
          </button>
        </div>
      ) : (
        <TimelineView timeline={timeline} label={`Messages in ${title}`} conversation={c} />
      )}
      <TypingLine conversationId={c.id} />
      {c.isMember ? (
        <Composer
          conversation={c}
          label={c.encrypted ? `Encrypted message to ${title}` : `Message ${title}`}
        />
      ) : (
        <JoinBar c={c} />
      )}
    </section>
  );
}

/** The newest message each conversation's read marker was moved to by this page. */
const markedUpTo = new Map<string, string>();

/**
 * Moves the read marker to the newest message while it is on screen: also for messages that
 * arrived live while the person was reading (they never counted as unread here, but the
 * server's marker must pass them, or reopening the channel shows them as new).
 */
function useMarkRead(c: Conversation, timeline: Timeline): void {
  const items = timeline.items.value;
  const last = items[items.length - 1];
  const bottom = atBottom.value;
  const mark = (messageId: string) => {
    patchConversation(c.id, { unreadCount: 0, mentionCount: 0 });
    markedUpTo.set(c.id, messageId);
    // The marker reads the conversation's notifications too: the inbox count follows.
    gql(MARK_READ, { id: c.id, messageId })
      .then(() => refreshNotificationCount())
      .catch(() => markedUpTo.delete(c.id));
  };
  useEffect(() => {
    if (!last || !bottom || !c.isMember || !timeline.live.value) return;
    if (document.visibilityState !== 'visible') return;
    const behind = c.unreadCount > 0 || c.mentionCount > 0;
    if (!behind && markedUpTo.get(c.id) === last.id) return;
    // Opened with nothing unread: the marker is where it should be already.
    if (!behind && !markedUpTo.has(c.id)) {
      markedUpTo.set(c.id, last.id);
      return;
    }
    mark(last.id);
  }, [last?.id, bottom, c.unreadCount]);
  useEffect(() => {
    const f = () => {
      if (document.visibilityState === 'visible' && atBottom.value) {
        const l = timeline.items.value[timeline.items.value.length - 1];
        const conv = conversations.value[c.id];
        if (l && (conv?.unreadCount || markedUpTo.get(c.id) !== l.id)) mark(l.id);
      }
    };
    document.addEventListener('visibilitychange', f);
    return () => document.removeEventListener('visibilitychange', f);
  }, [c.id]);
}

function Header({ c, title }: { c: Conversation; title: string }) {
  const myId = me.value?.id;
  const partner = c.kind === 'DIRECT' ? c.memberIds.find((x) => !isSelf(x, myId)) : undefined;
  const pane = sidePane.value;
  const [editing, setEditing] = useState(false);
  const [notifying, setNotifying] = useState(false);
  const [adding, setAdding] = useState(false);
  const muted = mutedNow(c);
  const leave = async () => {
    const what = c.kind === 'CHANNEL' ? `Leave ${title}?` : 'Leave this group conversation?';
    const yes = await confirmAction({
      title: what,
      body:
        c.kind === 'CHANNEL' && !c.isPrivate
          ? 'You can join again from the channel list.'
          : 'Someone in it has to add you back.',
      confirm: 'Leave',
    });
    if (!yes) return;
    try {
      if (c.kind === 'CHANNEL') await gql(LEAVE_CHANNEL, { id: c.id });
      else await gql(LEAVE_CONVERSATION, { id: c.id });
      if (c.kind === 'CHANNEL' && !c.isPrivate) patchConversation(c.id, { isMember: false });
      else dropConversation(c.id);
      navigate({ name: 'workspace', serverId: c.serverId, conversationId: null });
    } catch (err) {
      showError(err);
    }
  };
  return (
    <header class="conv-head">
      <DrawerToggle />
      <div class="conv-title">
        <h1 id="conv-title" dir="auto">
          {partner && <PresenceDot userId={partner} labelled />} {title}
          {partner && <span class="visually-hidden">, {presenceWords(partner)}</span>}
          {c.encrypted && <Lock />}
        </h1>
        {c.encrypted && c.isMember && <EncryptedNote conversationId={c.id} />}
        {c.topic && (
          <p class="topic" dir="auto">
            {c.topic}
          </p>
        )}
        {c.archived && <p class="topic">Archived: read only.</p>}
      </div>
      <div class="conv-tools" role="toolbar" aria-label="Conversation tools">
        <button
          type="button"
          aria-pressed={pane?.kind === 'members'}
          onClick={() => (sidePane.value = pane?.kind === 'members' ? null : { kind: 'members' })}
        >
          Members ({c.memberCount})
        </button>
        <button
          type="button"
          aria-pressed={pane?.kind === 'pins'}
          onClick={() => (sidePane.value = pane?.kind === 'pins' ? null : { kind: 'pins' })}
        >
          Pinned
        </button>
        {c.isMember && (
          <button
            type="button"
            aria-haspopup="dialog"
            title={
              muted
                ? 'Muted: notifications of this conversation'
                : 'Notifications of this conversation'
            }
            onClick={() => setNotifying(true)}
          >
            <Icon name={muted ? 'muted' : 'bell'} />
            <span class="visually-hidden">
              {muted ? 'Conversation notifications (muted)' : 'Conversation notifications'}
            </span>
          </button>
        )}
        {c.isMember && c.kind === 'CHANNEL' && (
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
        {c.isMember && c.kind === 'GROUP' && (
          <button type="button" onClick={() => setAdding(true)}>
            Add people
          </button>
        )}
        {adding && (
          <WorkspaceDialogs
            dialog={{ kind: 'add-people', conversationId: c.id }}
            onClose={() => setAdding(false)}
          />
        )}
        {c.isMember && c.kind !== 'DIRECT' && (
          <button type="button" onClick={() => void leave()}>
            Leave
          </button>
        )}
        {notifying && <ConversationNotify c={c} onClose={() => setNotifying(false)} />}
        {editing && (
          <WorkspaceDialogs
            dialog={{ kind: 'channel-settings', conversationId: c.id }}
            onClose={() => setEditing(false)}
          />
        )}
      </div>
    </header>
  );
}

function JoinBar({ c }: { c: Conversation }) {
  const [error, setError] = useState<unknown>(null);
  return (
    <div class="join-bar">
      <p>You are reading {titleOf(c)} without being in it.</p>
      <ErrorText error={error} />
      <button
        type="button"
        class="primary"
        onClick={() =>
          gql<{ joinChannel: Conversation }>(JOIN_CHANNEL, { id: c.id })
            .then((d) => putConversations([d.joinChannel]))
            .catch(setError)
        }
      >
        Join channel
      </button>
    </div>
  );
}

/** “Ana is typing…”, for as long as the typing events keep coming. */
function TypingLine({ conversationId }: { conversationId: string }) {
  const [now, setNow] = useState(Date.now());
  const who = Object.values(typing.value[conversationId] ?? {}).filter((t) => t.until > now);
  useEffect(() => {
    if (!who.length) return;
    const t = setTimeout(() => setNow(Date.now()), 1000);
    return () => clearTimeout(t);
  });
  const text =
    who.length === 0
      ? ''
      : who.length === 1
        ? `${who[0]!.name} is typing…`
        : `${who.map((w) => w.name).join(', ')} are typing…`;
  return (
    <p class="typing" aria-live="polite" dir="auto">
      {text}
    </p>
  );
}
