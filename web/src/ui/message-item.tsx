import { useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { DELETE, PIN, REACT, UNPIN, UNREACT } from '../api/queries.ts';
import type { Message, User } from '../api/types.ts';
import { findCustomEmoji } from '../state/emoji.ts';
import { me, serverIdOf, userOf } from '../state/store.ts';
import { sidePane } from '../state/view.ts';

import { Avatar } from './avatar.tsx';
import { EmojiPicker } from './emoji-picker.tsx';
import { CustomEmojiImage, fullTime, MessageText, timeOf } from './format.tsx';
import { Icon } from './icons.tsx';
import { memo } from './memo.ts';
import { messageParts } from './message-parts.tsx';
import { showError } from './toasts.tsx';
import { confirmAction } from './confirm.tsx';
import { isSelf } from '../remote/routing.ts';
import { e2ee } from '../e2ee/glue.ts';

export interface MessageActions {
  /** Start editing this message in the message box. */
  edit(m: Message): void;
  /** Whether the caller may delete others' messages here (owner, Moderator). */
  staff: boolean;
  /** Whether writes are possible (member, not archived). */
  canWrite: boolean;
  /** Whether replies open a thread (false inside a thread). */
  threads: boolean;
  report(m: Message): void;
}

/** The author as last heard of: a new display name (AccountUpdated) shows on every message. */
function authorOf(m: Message): User | null {
  return m.author ? (userOf(m.author.id).value ?? m.author) : null;
}

function authorName(author: User | null): string {
  return author ? (author.displayName ?? author.username) : 'Deleted account';
}

export async function react(m: Message, emoji: string): Promise<void> {
  const mine = m.reactions.find((r) => r.emoji === emoji)?.reactedByMe;
  try {
    await gql(mine ? UNREACT : REACT, { id: m.id, emoji });
  } catch (err) {
    showError(err);
  }
}

/**
 * One message: author, time, text, reactions, thread summary and its actions (shown on hover
 * and on focus; each is also a key on the focused message, listed under “?”).
 */
export const MessageItem = memo(function MessageItem(p: {
  m: Message;
  compact: boolean;
  actions: MessageActions;
}) {
  const { m, actions } = p;
  const [picking, setPicking] = useState(false);
  const own = isSelf(m.author?.id, me.value?.id);
  const author = authorOf(m);
  const name = authorName(author);
  const labelId = `m-${m.id}-label`;
  const serverId = serverIdOf(m.conversationId).value;
  if (m.isDeleted) {
    return (
      <article
        class="msg deleted"
        id={`m-${m.id}`}
        tabIndex={-1}
        data-id={m.id}
        aria-label="Deleted message"
      >
        <p class="muted">This message was deleted.</p>
        {m.replyCount > 0 && <ThreadSummary m={m} />}
      </article>
    );
  }
  return (
    <article
      class={`msg${p.compact ? ' compact' : ''}${m.pinned ? ' pinned' : ''}${
        m.mentions.userIds.includes(me.value?.id ?? '') || m.mentions.here ? ' mentions-me' : ''
      }`}
      id={`m-${m.id}`}
      data-id={m.id}
      data-own={own ? '1' : undefined}
      tabIndex={-1}
      aria-labelledby={labelId}
    >
      {!p.compact && <Avatar user={author} />}
      <div class="msg-body">
        <header class={p.compact ? 'visually-hidden' : 'msg-head'} id={labelId}>
          <strong dir="auto">{name}</strong>{' '}
          <time dateTime={m.createdAt} title={fullTime(m.createdAt)}>
            {timeOf(m.createdAt)}
          </time>
          {m.pinned && <span class="tag">pinned</span>}
        </header>
        {m.unreadable ? (
          <p class="muted unreadable" dir="auto">
            {m.unreadable}
          </p>
        ) : (
          <MessageText message={m} />
        )}
        {m.editedAt && (
          <span class="muted small" title={`Edited ${fullTime(m.editedAt)}`}>
            (edited)
          </span>
        )}
        {messageParts(m)}
        {m.reactions.length > 0 && (
          <ul class="plain reactions" aria-label="Reactions">
            {m.reactions.map((r) => (
              <li key={r.emoji}>
                <button
                  type="button"
                  class={r.reactedByMe ? 'reaction mine' : 'reaction'}
                  aria-pressed={r.reactedByMe}
                  aria-label={`${r.emoji} ${r.count}${r.reactedByMe ? ', including you' : ''}`}
                  disabled={!actions.canWrite}
                  onClick={() => void react(m, r.emoji)}
                >
                  <ReactionEmoji serverId={serverId} emoji={r.emoji} /> {r.count}
                </button>
              </li>
            ))}
          </ul>
        )}
        {actions.threads && m.replyCount > 0 && <ThreadSummary m={m} />}
      </div>
      <div class="msg-actions" role="toolbar" aria-label={`Actions for the message by ${name}`}>
        {actions.canWrite && (
          <button
            type="button"
            aria-label="Add a reaction"
            title="React (+)"
            onClick={() => setPicking(!picking)}
          >
            <Icon name="smile" />
          </button>
        )}
        {actions.threads && (
          <button
            type="button"
            aria-label="Reply in thread"
            title="Reply in thread (R)"
            onClick={() => (sidePane.value = { kind: 'thread', rootId: m.id })}
          >
            <Icon name="reply" />
          </button>
        )}
        {own && actions.canWrite && (
          <button type="button" aria-label="Edit" title="Edit (E)" onClick={() => actions.edit(m)}>
            <Icon name="edit" />
          </button>
        )}
        {actions.canWrite && (
          <button
            type="button"
            aria-label={m.pinned ? 'Unpin' : 'Pin'}
            title={m.pinned ? 'Unpin (P)' : 'Pin (P)'}
            onClick={() => void gql(m.pinned ? UNPIN : PIN, { id: m.id }).catch(showError)}
          >
            <Icon name="pin" />
          </button>
        )}
        {(own || actions.staff) && (
          <button
            type="button"
            aria-label="Delete"
            title="Delete (Delete)"
            onClick={() => void remove(m)}
          >
            <Icon name="trash" />
          </button>
        )}
        {!own && (
          <button
            type="button"
            aria-label="Report"
            title="Report"
            onClick={() => actions.report(m)}
          >
            <Icon name="warn" />
          </button>
        )}
      </div>
      {picking && (
        <EmojiPicker
          serverId={serverId}
          label="Add a reaction"
          onPick={(e) => {
            setPicking(false);
            void react(m, e);
          }}
          onClose={() => setPicking(false)}
        />
      )}
    </article>
  );
});

export async function remove(m: Message): Promise<void> {
  const yes = await confirmAction({
    title: 'Delete this message?',
    body: 'This cannot be undone.',
    confirm: 'Delete',
  });
  if (!yes) return;
  try {
    await gql(DELETE, { id: m.id });
    // An encrypted message's edits are messages of their own (../e2ee/client.ts): they go too.
    if (m.ciphertext) {
      for (const id of (await e2ee()).editsOf(m.id)) await gql(DELETE, { id });
    }
  } catch (err) {
    showError(err);
  }
}

function ThreadSummary({ m }: { m: Message }) {
  return (
    <button
      type="button"
      class="link thread-summary"
      onClick={() => (sidePane.value = { kind: 'thread', rootId: m.id })}
    >
      {m.replyCount} {m.replyCount === 1 ? 'reply' : 'replies'}
      {m.lastReplyAt && <span class="muted"> · last {timeOf(m.lastReplyAt)}</span>}
    </button>
  );
}

/** A reaction's emoji: a custom one as its picture when the workspace has it, else as written. */
function ReactionEmoji({ serverId, emoji }: { serverId?: string; emoji: string }) {
  const custom = emoji.startsWith(':') ? findCustomEmoji(serverId, emoji) : undefined;
  return custom ? (
    <CustomEmojiImage url={custom.url} shortcode={custom.shortcode} serverId={serverId} />
  ) : (
    <>{emoji}</>
  );
}
