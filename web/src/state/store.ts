import { computed, signal, type ReadonlySignal } from '@preact/signals';

import type {
  Conversation,
  DmRequest,
  Me,
  PresenceStatus,
  ServerInfo,
  User,
  Workspace,
} from '../api/types.ts';
import { isSelf } from '../remote/routing.ts';

// The client's shared state: what the server told us, kept current by live events. Screens read
// these signals; only state/ writes them.

export const serverInfo = signal<ServerInfo | null>(null);
/** The signed-in person; null while signed out. */
export const me = signal<Me | null>(null);
export const workspaces = signal<Workspace[]>([]);
/** Every conversation we know of by id: the channels of each workspace and the inbox. */
export const conversations = signal<Record<string, Conversation>>({});
export const dmRequests = signal<DmRequest[]>([]);
/** Users seen anywhere (authors, members), for names and mentions. */
export const users = signal<Record<string, User>>({});
export const presence = signal<Record<string, PresenceStatus>>({});
/** Who is typing, by conversation: user id -> time the indicator lapses (ms). */
export const typing = signal<Record<string, Record<string, { name: string; until: number }>>>({});
/** The live connection: `online`, `connecting` (or reconnecting), `offline`. */
export const connection = signal<'online' | 'connecting' | 'offline'>('connecting');

// One person or one conversation's workspace as a signal of its own, so a message re-renders
// only when its author changes, not whenever any user or conversation is added or updated (a
// conversation's members read again re-rendered every message on screen).
const userSignals = new Map<string, ReadonlySignal<User | undefined>>();
const serverIdSignals = new Map<string, ReadonlySignal<string | undefined>>();

/** The user with this id as last heard of. */
export function userOf(id: string): ReadonlySignal<User | undefined> {
  let s = userSignals.get(id);
  if (!s) {
    s = computed(() => users.value[id]);
    userSignals.set(id, s);
  }
  return s;
}

/** The workspace of a conversation. */
export function serverIdOf(conversationId: string): ReadonlySignal<string | undefined> {
  let s = serverIdSignals.get(conversationId);
  if (!s) {
    s = computed(() => conversations.value[conversationId]?.serverId);
    serverIdSignals.set(conversationId, s);
  }
  return s;
}

export function featureOn(key: string): boolean {
  return serverInfo.value?.features.some((f) => f.key === key && f.state === 'ENABLED') ?? false;
}

export function rememberUsers(list: (User | null | undefined)[]): void {
  let changed = false;
  const next = { ...users.value };
  for (const u of list) {
    if (!u) continue;
    const had = next[u.id];
    if (
      !had ||
      had.username !== u.username ||
      had.displayName !== u.displayName ||
      (u.avatarUrl !== undefined && had.avatarUrl !== u.avatarUrl)
    ) {
      next[u.id] = u;
      changed = true;
    }
  }
  if (changed) users.value = next;
}

// A read of conversations can be overtaken: a live event (a message, a mention) or the person
// reading moves a count while the read is under way, and the read's answer, written on the
// server before that, would put the old count back. Each change of a count made here is
// numbered; a read takes a mark before it asks, and keeps the counts changed after its mark.
let countChanges = 0;
const countsChangedAt = new Map<string, number>();

/** The mark a read of conversations takes before it asks (`putConversations`' `since`). */
export function countsMark(): number {
  return countChanges;
}

/** `c` as a read begun at `since` answered it, with the counts changed here since kept. */
function withNewerCounts(c: Conversation, had: Conversation | undefined, since: number) {
  if (!had || (countsChangedAt.get(c.id) ?? 0) <= since) return c;
  return { ...c, unreadCount: had.unreadCount, mentionCount: had.mentionCount };
}

/**
 * Adds or updates conversations read from a server. With `since` (a `countsMark()` taken before
 * the read asked), unread and mention counts changed on this page since then are kept.
 */
export function putConversations(list: Conversation[], since?: number): void {
  const before = conversations.value;
  const next = { ...before };
  for (const c of list) {
    const read = since === undefined ? c : withNewerCounts(c, before[c.id], since);
    next[c.id] = { ...next[c.id], ...read };
    if (c.members) rememberUsers(c.members);
  }
  conversations.value = next;
}

/** Replaces every conversation with a whole new read begun at `since` (see `putConversations`). */
export function replaceConversations(list: Conversation[], since: number): void {
  const before = conversations.value;
  conversations.value = {};
  putConversations(list.map((c) => withNewerCounts(c, before[c.id], since)));
}

export function patchConversation(id: string, patch: Partial<Conversation>): void {
  const had = conversations.value[id];
  if (!had) return;
  if ('unreadCount' in patch || 'mentionCount' in patch) countsChangedAt.set(id, ++countChanges);
  conversations.value = { ...conversations.value, [id]: { ...had, ...patch } };
}

export function dropConversation(id: string): void {
  if (!conversations.value[id]) return;
  const next = { ...conversations.value };
  delete next[id];
  conversations.value = next;
}

export function patchWorkspace(id: string, patch: Partial<Workspace>): void {
  workspaces.value = workspaces.value.map((w) => (w.id === id ? { ...w, ...patch } : w));
}

export const directSpace = computed(() => workspaces.value.find((w) => w.isDirect) ?? null);

/** The name a person is shown by. */
export function nameOf(userId: string | null | undefined): string {
  if (!userId) return 'Deleted account';
  const u = users.value[userId];
  return u ? (u.displayName ?? u.username) : 'Someone';
}

/** A conversation's title: `#channel`, a group's name, or the other people's names. */
export function titleOf(c: Conversation): string {
  if (c.kind === 'CHANNEL') return `#${c.name ?? ''}`;
  if (c.name) return c.name;
  const myId = me.value?.id;
  // Invitees of an encrypted conversation are named too, until they answer.
  // On a host, the person is `<name>@<relay>` there (isSelf).
  const others = [...c.memberIds, ...(c.pendingMemberIds ?? [])].filter((id) => !isSelf(id, myId));
  if (!others.length) return me.value ? nameOf(me.value.id) : 'Only you';
  return others.map(nameOf).join(', ');
}

export function resetStore(): void {
  me.value = null;
  workspaces.value = [];
  conversations.value = {};
  dmRequests.value = [];
  users.value = {};
  presence.value = {};
  typing.value = {};
}
