import { signal } from '@preact/signals';

import { ApiError, gql, gqlBatch, rememberCsrf } from '../api/graphql.ts';
import { Live } from '../api/live.ts';
import { readAll, readRest } from '../api/paged.ts';
import {
  CONVERSATION_Q,
  DM_REQUESTS,
  INBOX,
  LOGOUT,
  ME,
  MY_WORKSPACES,
  PRESENCE,
  SERVER_INFO,
  CHANNEL_PAGE,
  WORKSPACE_CHANNELS,
} from '../api/queries.ts';
import type {
  Conversation,
  DmRequest,
  Me,
  PresenceStatus,
  ServerInfo,
  User,
  Workspace,
} from '../api/types.ts';

import { applyEvent } from './events.ts';

type PagedConversation = Conversation & { cursor: string };
import {
  connection,
  conversations,
  countsMark,
  dmRequests,
  me,
  presence,
  putConversations,
  rememberUsers,
  replaceConversations,
  resetStore,
  serverInfo,
  workspaces,
} from './store.ts';
import { forgetCustomEmoji } from './emoji.ts';
import { navigate } from './router.ts';
import { forgetTimelines, markAllStale } from './timeline.ts';
import { refreshNotificationCount, unreadNotifications } from './notifications.ts';
import { adoptPushOnSignIn, forgetPushOnSignOut } from './push.ts';
import { prepareEncryption } from '../e2ee/glue.ts';
import {
  forgetRemote,
  loadRemoteDmRequests,
  loadRemoteInboxes,
  loadRemoteWorkspaces,
  noteHostsAfterLoad,
  wokenBy,
} from '../remote/spaces.ts';
import { hostOfId, isRelay, tagEvent } from '../remote/routing.ts';

/** `booting` until we know whether a session exists; then `in` or `out`. */
export const phase = signal<'booting' | 'in' | 'out'>('booting');
/** Why the person was sent to the sign-in screen, shown there. */
export const signedOutReason = signal<string | null>(null);
/** A failure to start (the server could not be reached), shown with a retry. */
export const bootError = signal<unknown>(null);

let live: Live | null = null;

export async function loadServerInfo(): Promise<ServerInfo> {
  const d = await gql<{ serverInfo: ServerInfo }>(SERVER_INFO);
  serverInfo.value = d.serverInfo;
  return d.serverInfo;
}

/** First load: server info, then whether the cookie holds a session. */
export async function boot(): Promise<void> {
  try {
    const [info, who] = await gqlBatch([{ query: SERVER_INFO }, { query: ME }]);
    if (info && 'data' in info)
      serverInfo.value = (info.data as { serverInfo: ServerInfo }).serverInfo;
    else throw info?.error;
    // A failure shown before stays on screen until this attempt has its answer.
    bootError.value = null;
    if (who && 'data' in who) {
      await enter((who.data as { me: Me }).me);
    } else {
      phase.value = 'out';
    }
  } catch (err) {
    bootError.value = err;
  }
}

/** After a sign-in or signup answered: remember the token and load the signed-in app. */
export async function signedIn(payload: { csrfToken: string }): Promise<void> {
  rememberCsrf(payload.csrfToken);
  signedOutReason.value = null;
  const d = await gql<{ me: Me }>(ME);
  await enter(d.me);
}

async function enter(who: Me): Promise<void> {
  me.value = who;
  rememberUsers([who]);
  await loadEverything();
  phase.value = 'in';
  startLive();
  void adoptPushOnSignIn();
  void prepareEncryption().catch(() => undefined);
}

/** Reads every list the sidebar shows. Also after a reconnect, when events may be missing. */
export async function loadEverything(): Promise<void> {
  const since = countsMark();
  const [myWorkspaces, remote] = await Promise.all([
    readAll<Workspace & { cursor: string }>(MY_WORKSPACES, 'myWorkspaces', {}, 100),
    // Workspaces on other servers, through the relay (web/src/remote).
    loadRemoteWorkspaces(),
  ]);
  workspaces.value = [...myWorkspaces, ...remote];
  const real = workspaces.value.filter((w) => !w.isDirect);
  const [results, remoteDirect, remoteRequests] = await Promise.all([
    gqlBatch([
      { query: INBOX },
      { query: DM_REQUESTS },
      ...real.map((w) => ({
        query: WORKSPACE_CHANNELS,
        variables: { serverId: w.id, limit: CHANNEL_PAGE },
      })),
    ]),
    // The person's direct conversations with people of each host, in the host's direct space.
    loadRemoteInboxes(),
    loadRemoteDmRequests(),
  ]);
  const next: Record<string, Conversation> = {};
  for (const c of remoteDirect) next[c.id] = c;
  const [inbox, requests, ...channels] = results;
  if (inbox && 'data' in inbox) {
    const page = (inbox.data as { inboxConversations: { items: Conversation[] } })
      .inboxConversations;
    for (const c of page.items) next[c.id] = c;
  }
  // A workspace with more channels than one page: the sidebar needs every one it is in.
  const lists = await Promise.all(
    channels.map((r, i) =>
      'data' in r
        ? readRest(
            WORKSPACE_CHANNELS,
            'channels',
            { serverId: real[i]!.id },
            (r.data as { channels: PagedConversation[] }).channels,
            CHANNEL_PAGE,
          )
        : [],
    ),
  );
  for (const list of lists) for (const c of list) next[c.id] = c;
  replaceConversations(Object.values(next), since);
  noteHostsAfterLoad([
    ...remote.map((w) => w.id),
    ...remoteDirect.map((c) => c.id),
    ...remoteRequests.map((r) => r.id),
  ]);
  if (requests && 'data' in requests) {
    showDmRequests([
      ...(requests.data as { dmRequests: DmRequest[] }).dmRequests,
      ...remoteRequests,
    ]);
  }
  void refreshPresence();
  void refreshNotificationCount();
}

/** Presence of the people the sidebar shows (direct conversation partners), 200 at most. */
export async function refreshPresence(extra: string[] = []): Promise<void> {
  const ids = new Set(extra);
  for (const c of Object.values(conversations.value)) {
    if (c.kind !== 'CHANNEL') for (const id of c.memberIds) ids.add(id);
  }
  if (me.value) ids.delete(me.value.id);
  const list = [...ids].slice(0, 200);
  if (!list.length) return;
  try {
    const d = await gql<{ presence: { userId: string; status: PresenceStatus }[] }>(PRESENCE, {
      ids: list,
    });
    const next = { ...presence.value };
    for (const p of d.presence) next[p.userId] = p.status;
    presence.value = next;
  } catch {
    // presence is a nicety: the next event corrects it
  }
}

export async function refreshConversation(id: string): Promise<Conversation | null> {
  const since = countsMark();
  try {
    const d = await gql<{ conversation: Conversation & { members: User[] } }>(CONVERSATION_Q, {
      id,
    });
    putConversations([d.conversation], since);
    return d.conversation;
  } catch (err) {
    // Signed out while it was asked (the sign-in screen shows already): nothing to show.
    if (
      err instanceof ApiError &&
      (err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN' || err.code === 'UNAUTHENTICATED')
    ) {
      return null;
    }
    throw err;
  }
}

/** Reads the DM requests waiting for the person again: this server's and each host's. */
export async function refreshDmRequests(): Promise<void> {
  const [d, remote] = await Promise.all([
    gql<{ dmRequests: DmRequest[] }>(DM_REQUESTS),
    loadRemoteDmRequests(),
  ]);
  showDmRequests([...d.dmRequests, ...remote]);
}

/** The requests, newest first wherever they wait (as each server lists its own). */
function showDmRequests(list: DmRequest[]): void {
  dmRequests.value = list.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  rememberUsers(list.map((r) => r.from));
}

function startLive(): void {
  live?.dispose();
  live = new Live(
    {
      event: (e) => {
        // What a host's event names belongs to the host (web/src/remote).
        tagEvent(e);
        // A host left out of the loads has something for the person again.
        if (wokenBy(e.hostServerId)) void loadEverything();
        applyEvent(e);
      },
      status: (s) => {
        connection.value = s;
      },
      resync: () => {
        markAllStale();
        void loadEverything().then(() => resyncHook?.());
      },
      sessionEnded: () => leave('Your session ended. Sign in again to continue.'),
      workspaceEnded: forgetWorkspace,
      checkSession: async () => {
        try {
          await gql(ME);
          return true;
        } catch (err) {
          return !(err instanceof ApiError && err.code === 'UNAUTHENTICATED');
        }
      },
    },
    // A relay names the host of each event it passes on (docs/federation.md, "Events").
    isRelay.value,
  );
  follow();
}

/** Subscribes to every workspace we are in (and forgets those we left). */
export function follow(): void {
  // A host's events for its remote members come on relayStream (docs/federation.md, "Events").
  for (const w of workspaces.value) if (!hostOfId(w.id)) live?.follow(w.id);
}

export function unfollow(serverId: string): void {
  live?.unfollow(serverId);
}

/** A workspace we are no longer in (left, removed, deleted): its stream and what it showed. */
export function forgetWorkspace(serverId: string): void {
  unfollow(serverId);
  workspaces.value = workspaces.value.filter((w) => w.id !== serverId);
  putConversationsWithout(serverId);
}

let resyncHook: (() => void) | null = null;
/** The open conversation reloads itself after a reconnect. */
export function onResync(f: (() => void) | null): void {
  resyncHook = f;
}

function putConversationsWithout(serverId: string): void {
  const next = { ...conversations.value };
  for (const [id, c] of Object.entries(next)) if (c.serverId === serverId) delete next[id];
  conversations.value = next;
}

/** Back to the sign-in screen, with a reason to show there. */
export function leave(reason: string | null): void {
  live?.dispose();
  live = null;
  rememberCsrf(null);
  forgetTimelines();
  forgetCustomEmoji();
  forgetRemote();
  resetStore();
  // Workspace plugins' sandboxes end with the sign-in (plugins/sandbox.ts): a frame removed
  // takes its worker with it.
  for (const f of document.querySelectorAll('iframe[data-plugin]')) f.remove();
  unreadNotifications.value = 0;
  signedOutReason.value = reason;
  phase.value = 'out';
}

/** Signs out and shows the sign-in screen at `/`: nothing of the signed-in app stays in the address. */
export async function signOut(): Promise<void> {
  try {
    // Before the session ends: removing the push subscription needs it.
    await forgetPushOnSignOut();
    await gql(LOGOUT);
  } finally {
    leave(null);
    navigate({ name: 'home' }, { replace: true });
  }
}
