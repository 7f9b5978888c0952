import type { Attachment, Conversation, LiveEvent, Message, User } from '../api/types.ts';

import {
  conversations,
  dropConversation,
  me,
  patchConversation,
  patchWorkspace,
  presence,
  rememberUsers,
  typing,
  users,
  workspaces,
} from './store.ts';
import { forgetWorkspace, refreshConversation, refreshDmRequests, unfollow } from './session.ts';
import { cachedConversation, cachedThread, timelinesOf, updateShown } from './timeline.ts';
import { reading } from './view.ts';
import { RecentEvents } from './repeats.ts';
import { e2ee, refreshInvitations } from '../e2ee/glue.ts';
import { isSelf } from '../remote/routing.ts';
import {
  notificationCreated,
  notificationsRead,
  refreshNotificationCount,
} from './notifications.ts';
import { pluginsChanged } from './plugins.ts';
import { commandListsChanged } from './command-lists.ts';

type P = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** How long a typing indicator shows after the last TypingStarted (the server sends one per 3 s). */
export const TYPING_SHOWN_MS = 6000;

const recent = new RecentEvents();

/**
 * Applies one live event (docs/events.md) to the client's state. Unknown kinds are ignored, and
 * so is a repeat (delivery is at least once).
 */
export function applyEvent(e: LiveEvent): void {
  if (recent.repeated(e)) return;
  const p = e.payload;
  const conv = e.conversationId;
  const myId = me.value?.id;
  switch (e.type) {
    case 'MessageCreated': {
      const raw = p.message as P;
      if (typeof raw.ciphertext !== 'string') return messageCreated(messageFromEvent(raw), myId);
      // Encrypted: shown once this browser decrypted it (its own sends show from the answer).
      void e2ee()
        .then(async (client) => {
          const msg = await client.decryptLive(messageFromEvent(raw));
          if (!msg?.replaces) return msg && messageCreated(msg, myId);
          // An edit: the message it replaces shows its text, the edit itself is not shown.
          client.takeEdit(msg);
          updateMessage(conv ?? msg.conversationId, msg.replaces, client.withEdit);
        })
        .catch(() => messageCreated(messageFromEvent(raw), myId));
      return;
    }
    case 'MlsCommitAdded':
    case 'MlsWelcomeAvailable':
    case 'MlsMembershipChanged':
    case 'MlsKeyPackagesLow':
      void (async () => {
        if (e.type === 'MlsMembershipChanged' && conv) await refreshConversation(conv);
        const r = await (await e2ee()).mlsEvent(e.type, conv, p);
        if (r === 'joined' && conv) void cachedConversation(conv)?.open();
      })().catch(() => undefined);
      return;
    case 'MessageEdited':
      return updateMessage(conv, str(p.messageId), (m) => ({
        ...m,
        text: str(p.text),
        editedAt: str(p.editedAt),
        mentions: mentionsOf(p.mentions),
      }));
    case 'MessageUpdated':
      // The message's whole list of link previews (docs/events.md): applied as a state.
      return updateMessage(conv, str(p.messageId), (m) => ({
        ...m,
        linkPreviews: Array.isArray(p.linkPreviews)
          ? (p.linkPreviews as Message['linkPreviews'])
          : [],
      }));
    case 'MessageDeleted': {
      const root = str(p.threadRootId);
      if (root && conv) {
        updateMessage(conv, root, (m) => ({ ...m, replyCount: Math.max(0, m.replyCount - 1) }));
      }
      return updateMessage(conv, str(p.messageId), (m) => ({
        ...m,
        isDeleted: true,
        text: null,
        reactions: [],
        pinned: false,
      }));
    }
    case 'MessageAttachmentAdded': {
      const a = p.attachment as Attachment | undefined;
      if (!a?.id) return;
      // The sender already shows it from its finalize answer: add each attachment once.
      return updateMessage(conv, str(p.messageId), (m) =>
        m.attachments.some((x) => x.id === a.id) ? m : { ...m, attachments: [...m.attachments, a] },
      );
    }
    case 'ReactionAdded':
    case 'ReactionRemoved': {
      const emoji = str(p.emoji) ?? '';
      const mine = isSelf(str(p.userId), myId);
      const delta = e.type === 'ReactionAdded' ? 1 : -1;
      return updateMessage(conv, str(p.messageId), (m) => {
        const groups = m.reactions.map((r) => ({ ...r }));
        let g = groups.find((r) => r.emoji === emoji);
        if (!g) {
          if (delta < 0) return m;
          g = { emoji, count: 0, reactedByMe: false };
          groups.push(g);
        }
        g.count += delta;
        if (mine) g.reactedByMe = delta > 0;
        return { ...m, reactions: groups.filter((r) => r.count > 0) };
      });
    }
    case 'MessagePinned':
    case 'MessageUnpinned':
      return updateMessage(conv, str(p.messageId), (m) => ({
        ...m,
        pinned: e.type === 'MessagePinned',
      }));
    case 'ReadMarkerUpdated':
      if (conv && p.userId === myId) {
        void refreshConversation(conv);
        // Moving the marker reads the conversation's notifications too.
        void refreshNotificationCount();
      }
      return;
    case 'NotificationCreated':
      return notificationCreated((p.notification ?? {}) as P);
    case 'NotificationsRead':
      return notificationsRead(p);
    case 'TypingStarted': {
      const uid = str(p.user_id);
      if (!conv || !uid || uid === myId) return;
      const name = str(p.display_name) ?? str(p.username) ?? 'Someone';
      typing.value = {
        ...typing.value,
        [conv]: { ...typing.value[conv], [uid]: { name, until: Date.now() + TYPING_SHOWN_MS } },
      };
      return;
    }
    case 'PresenceChanged':
    case 'PresencesChanged': {
      // One person on the own topic; a workspace's changes gathered, on its topic.
      const changes = Array.isArray(p.changes) ? (p.changes as Record<string, unknown>[]) : [p];
      const next = { ...presence.value };
      for (const c of changes) {
        const uid = str(c.userId);
        const status = str(c.status);
        if (uid && (status === 'ONLINE' || status === 'AWAY' || status === 'OFFLINE')) {
          next[uid] = status;
        }
      }
      presence.value = next;
      return;
    }
    case 'ChannelCreated':
    case 'ConversationCreated':
      if (conv) void refreshConversation(conv);
      return;
    case 'ChannelUpdated': {
      const patch: Partial<Conversation> = {};
      if ('name' in p) patch.name = str(p.name);
      if ('topic' in p) patch.topic = str(p.topic);
      if (conv) patchConversation(conv, patch);
      return;
    }
    case 'ChannelArchived':
    case 'ChannelUnarchived':
      if (conv) patchConversation(conv, { archived: e.type === 'ChannelArchived' });
      return;
    case 'MemberAddedToConversation':
    case 'MemberRemovedFromConversation':
      if (!conv) return;
      if (p.userId === myId && e.type === 'MemberRemovedFromConversation') {
        const c = conversations.value[conv];
        if (c && c.kind === 'CHANNEL' && !c.isPrivate) {
          patchConversation(conv, { isMember: false, unreadCount: 0 });
        } else {
          dropConversation(conv);
        }
        return;
      }
      void refreshConversation(conv).then((c) => {
        // A pending invitee cannot read the conversation itself: the inbox lists it.
        if (!c && p.userId === myId && p.state === 'pending') void refreshInvitations();
      });
      return;
    case 'MemberJoined':
    case 'MemberLeft': {
      const sid = e.serverId;
      if (!sid) return;
      if (e.type === 'MemberLeft' && p.userId === myId) {
        workspaces.value = workspaces.value.filter((w) => w.id !== sid);
        unfollow(sid);
        return;
      }
      const w = workspaces.value.find((x) => x.id === sid);
      if (w) {
        patchWorkspace(sid, { memberCount: w.memberCount + (e.type === 'MemberJoined' ? 1 : -1) });
      }
      return;
    }
    case 'AccountUpdated': {
      // A person's new display name (docs/events.md): shown wherever they appear, at once.
      const uid = str(p.userId);
      const known = uid ? users.value[uid] : undefined;
      if (!uid) return;
      const displayName = str(p.displayName);
      if (known) rememberUsers([{ ...known, displayName }]);
      if (uid === myId && me.value) me.value = { ...me.value, displayName };
      return;
    }
    case 'MemberRoleChanged':
      if (e.serverId && p.userId === myId) {
        patchWorkspace(e.serverId, { myRole: roleOf(p.role) });
      }
      return;
    case 'MemberTimedOut':
      if (e.serverId && p.userId === myId) {
        patchWorkspace(e.serverId, { myTimedOutUntil: str(p.until) });
      }
      return;
    case 'WorkspaceUpdated': {
      if (!e.serverId) return;
      const patch: Record<string, unknown> = {};
      if ('name' in p) patch.name = p.name;
      if ('description' in p) patch.description = p.description;
      patchWorkspace(e.serverId, patch);
      return;
    }
    case 'WorkspaceDeleted':
      if (e.serverId) forgetWorkspace(e.serverId);
      return;
    case 'WorkspacePluginAdded':
    case 'WorkspacePluginUpdated':
    case 'WorkspacePluginRemoved':
      pluginsChanged();
      return;
    case 'WorkspaceMacroCreated':
    case 'WorkspaceMacroDeleted':
    case 'WorkspaceKeybindSet':
    case 'WorkspaceKeybindDeleted':
      commandListsChanged();
      return;
    case 'DmRequestReceived':
    case 'DmRequestAnswered':
      void refreshDmRequests();
      if (conv) void refreshConversation(conv);
      return;
    default:
      return;
  }
}

function roleOf(v: unknown): 'OWNER' | 'MODERATOR' | 'MEMBER' | 'GUEST' | null {
  const s = String(v ?? '').toUpperCase();
  return s === 'OWNER' || s === 'MODERATOR' || s === 'MEMBER' || s === 'GUEST' ? s : null;
}

function mentionsOf(v: unknown): Message['mentions'] {
  const m = (v ?? {}) as P;
  return {
    userIds: Array.isArray(m.users) ? (m.users as string[]) : [],
    channelIds: Array.isArray(m.channels) ? (m.channels as string[]) : [],
    here: m.here === true,
  };
}

/** A Message built from a MessageCreated payload (the author from what we know of them). */
export function messageFromEvent(m: P): Message {
  const authorId = str(m.authorId);
  const author: User | null = authorId
    ? (users.value[authorId] ?? { id: authorId, username: 'someone', displayName: null })
    : null;
  return {
    id: String(m.id),
    conversationId: String(m.conversationId),
    author,
    text: str(m.text),
    isDeleted: false,
    createdAt: String(m.createdAt),
    editedAt: str(m.editedAt),
    threadRootId: str(m.threadRootId),
    replyCount: 0,
    lastReplyAt: null,
    reactions: [],
    mentions: mentionsOf(m.mentions),
    pinned: false,
    linkPreviews: [],
    attachments: [],
    ciphertext: str(m.ciphertext),
    mls: (m.mls as Message['mls']) ?? null,
  };
}

function messageCreated(msg: Message, myId: string | undefined): void {
  const conv = msg.conversationId;
  const authorId = msg.author?.id;
  if (authorId && !users.value[authorId]) {
    // Someone we have not seen: their name comes with the conversation's member list.
    void refreshConversation(conv).then(() => {
      const u = users.value[authorId];
      if (u) rememberUsers([u]);
      for (const t of timelinesOf(conv)) t.update(msg.id, (m) => ({ ...m, author: u ?? m.author }));
    });
  }
  // Typing ends when the message arrives.
  if (authorId && typing.value[conv]?.[authorId]) {
    const t = { ...typing.value[conv] };
    delete t[authorId];
    typing.value = { ...typing.value, [conv]: t };
  }
  if (msg.threadRootId) {
    cachedThread(msg.threadRootId)?.add(msg);
    updateMessage(conv, msg.threadRootId, (m) => ({
      ...m,
      replyCount: m.replyCount + 1,
      lastReplyAt: msg.createdAt,
    }));
    return;
  }
  cachedConversation(conv)?.add(msg);
  const c = conversations.value[conv];
  if (!c) {
    void refreshConversation(conv);
    return;
  }
  const patch: Partial<Conversation> = { lastActivityAt: msg.createdAt };
  const own = isSelf(authorId, myId);
  // Mentions are counted by the server: a NotificationCreated follows for those that notify.
  if (!own && !reading(conv)) patch.unreadCount = c.unreadCount + 1;
  patchConversation(conv, patch);
}

const updateMessage = updateShown;
