import { useEffect, useRef, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { usePagedList } from '../api/paged.ts';
import { CONVERSATION_MEMBERS, CREATE_CONVERSATION, PINNED } from '../api/queries.ts';
import type { Conversation, Message, User } from '../api/types.ts';
import { navigate, route } from '../state/router.ts';
import { refreshPresence } from '../state/session.ts';
import {
  conversations,
  directSpace,
  me,
  putConversations,
  rememberUsers,
  users,
} from '../state/store.ts';
import { cachedConversation, threadTimeline } from '../state/timeline.ts';
import { isSelf } from '../remote/routing.ts';
import { readThreadNotifications } from '../state/notifications.ts';
import { sidePane } from '../state/view.ts';

import { Avatar } from './avatar.tsx';
import { Composer } from './composer.tsx';
import { fullTime, MessageText } from './format.tsx';
import { PresenceDot, presenceWords } from './presence.tsx';
import { TimelineView } from './timeline-view.tsx';
import { ErrorText, showError } from './toasts.tsx';
import { Icon } from './icons.tsx';

/** The right-hand pane of the open conversation: a thread, the pinned messages, or its members. */
export function SidePane() {
  const pane = sidePane.value;
  const r = route.value;
  const c =
    r.name === 'workspace' && r.conversationId ? conversations.value[r.conversationId] : null;
  useEffect(() => {
    const close = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented && !document.querySelector('dialog[open]')) {
        sidePane.value = null;
      }
    };
    addEventListener('keydown', close);
    return () => removeEventListener('keydown', close);
  }, []);
  if (!pane || !c) return null;
  const title =
    pane.kind === 'thread' ? 'Thread' : pane.kind === 'pins' ? 'Pinned messages' : 'Members';
  return (
    <aside class="pane" aria-labelledby="pane-title">
      <header class="pane-head">
        <h2 id="pane-title">{title}</h2>
        <button
          type="button"
          class="icon"
          aria-label={`Close ${title.toLowerCase()}`}
          onClick={() => (sidePane.value = null)}
        >
          <Icon name="close" />
        </button>
      </header>
      {pane.kind === 'thread' && <Thread key={pane.rootId} rootId={pane.rootId} c={c} />}
      {pane.kind === 'pins' && <Pins key={c.id} c={c} />}
      {pane.kind === 'members' && <Members key={c.id} c={c} />}
    </aside>
  );
}

function Thread({ rootId, c }: { rootId: string; c: Conversation }) {
  const t = threadTimeline(rootId);
  const root = cachedConversation(c.id)?.find(rootId);
  useEffect(() => {
    if (!t.ready.value || t.stale) void t.open();
    void readThreadNotifications(c.id, rootId).catch(() => undefined);
  }, [rootId]);
  return (
    <div class="thread">
      <TimelineView
        timeline={t}
        label="Replies in the thread"
        conversation={c}
        thread
        header={
          root ? (
            <div class="thread-root">
              <p class="muted small">
                {root.author?.displayName ?? root.author?.username ?? 'Deleted account'} ·{' '}
                {fullTime(root.createdAt)}
              </p>
              {root.isDeleted ? (
                <p class="muted">This message was deleted.</p>
              ) : (
                <MessageText message={root} />
              )}
            </div>
          ) : undefined
        }
      />
      {c.isMember && (
        <Composer conversation={c} label="Reply in the thread" threadRootId={rootId} />
      )}
    </div>
  );
}

function Pins({ c }: { c: Conversation }) {
  const [pins, setPins] = useState<Message[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    gql<{ pinnedMessages: Message[] }>(PINNED, { id: c.id })
      .then((d) => setPins(d.pinnedMessages))
      .catch(setError);
  }, [c.id, cachedConversation(c.id)?.items.value.filter((m) => m.pinned).length]);
  if (error) return <ErrorText error={error} />;
  if (!pins) return <p class="loading">Loading…</p>;
  if (!pins.length)
    return <p class="hint">Nothing is pinned here. Pin a message from its actions (or P).</p>;
  return (
    <ul class="plain pins">
      {pins.map((m) => (
        <li key={m.id}>
          <p class="muted small">
            {m.author?.displayName ?? m.author?.username ?? 'Deleted account'} ·{' '}
            {fullTime(m.createdAt)}
          </p>
          <MessageText message={m} />
        </li>
      ))}
    </ul>
  );
}

/** Members shown at first and added by each "Show more" (a channel's list can be long). */
const MEMBERS_PAGE = 20;

function Members({ c }: { c: Conversation }) {
  const conv = conversations.value[c.id] ?? c;
  const myId = me.value?.id;
  // The pane reads its own pages, in the order people joined; when someone joins or leaves
  // (the store reads the conversation again), it starts over from the first page.
  const list = usePagedList<User & { cursor: string }>(
    CONVERSATION_MEMBERS,
    'conversation.members',
    { id: c.id },
    MEMBERS_PAGE,
  );
  const ids = list.items?.map((u) => u.id) ?? [];
  useEffect(() => {
    if (!list.items) return;
    rememberUsers(list.items);
    void refreshPresence(ids.filter((id) => id !== myId));
  }, [list.items]);
  const joined = conv.memberIds.join();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) first.current = false;
    else void list.reload();
  }, [joined, conv.memberCount]);
  const message = async (userId: string) => {
    try {
      const d = await gql<{
        createConversation: { conversation: Conversation; dmRequestsSent: { id: string }[] };
      }>(CREATE_CONVERSATION, { input: { memberIds: [userId] } });
      const conversation = d.createConversation.conversation;
      // With a person of a host, the conversation is made there, in the person's direct space
      // on the host (its id is the host's), and shows among the direct messages here.
      putConversations([conversation]);
      sidePane.value = null;
      navigate({
        name: 'workspace',
        serverId: directSpace.value?.id ?? conversation.serverId,
        conversationId: conversation.id,
      });
    } catch (err) {
      showError(err);
    }
  };
  if (list.error) return <ErrorText error={list.error} />;
  if (!list.items) return <p class="loading">Loading…</p>;
  return (
    <>
      <ul class="plain members">
        {ids.map((id) => {
          const u = users.value[id];
          return (
            <li key={id}>
              <Avatar user={u ?? null} small />
              <PresenceDot userId={id} />
              <span dir="auto">{u?.displayName ?? u?.username ?? 'Someone'}</span>
              {u && <span class="muted">@{u.username}</span>}
              <span class="visually-hidden">, {presenceWords(id)}</span>
              {!isSelf(id, myId) && c.kind === 'CHANNEL' && (
                <button type="button" class="small" onClick={() => void message(id)}>
                  Message
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {list.more && (
        <button type="button" onClick={list.loadMore}>
          Show more members
        </button>
      )}
    </>
  );
}
