import { signal } from '@preact/signals';

import { ApiError, gqlAt, routeRemote } from '../api/graphql.ts';
import { DM_REQUESTS, INBOX, JOIN_WORKSPACE } from '../api/queries.ts';
import type { Conversation, DmRequest, Workspace } from '../api/types.ts';
import { storedAccounts } from '../auth/keys.ts';
import { me } from '../state/store.ts';

import { forgetPictures } from './host-image.ts';
import { noteQuietHosts, quietHosts, wakeHost } from './quiet-hosts.ts';
import { remotePost, remoteUpload } from './relay.ts';
import {
  addRemoteHost,
  forgetRemoteState,
  hostOf,
  hostOfId,
  isRelay,
  storedHosts,
  remoteHosts,
  remoteSelf,
  tagId,
  tagIds,
} from './routing.ts';

// Workspaces hosted on other servers, beside this server's own in the rail (docs/web-client.md,
// "Spaces on other servers").

routeRemote({ hostOf, post: remotePost, tag: tagIds, upload: remoteUpload });

/** Why a host's workspaces could not be read at the last load, by host. */
export const remoteProblems = signal<Record<string, ApiError>>({});

const WORKSPACE = `id name description isDirect ownerId myRole myTimedOutUntil memberCount`;
const MY_REMOTE_HOSTS = `query MyRemoteHosts { myRemoteHosts }`;
const REMOTE_SELF = `query RemoteSelf { me { id username } myWorkspaces { ${WORKSPACE} } }`;
/** A host's first page of `myWorkspaces` (its default, docs/api.md, Pagination). */
const REMOTE_PAGE = 100;
const REMOTE_WORKSPACES = `query RemoteWorkspaces($after: String, $limit: Int) {
  myWorkspaces(after: $after, limit: $limit) { ${WORKSPACE} cursor } }`;
/** The last list each host answered, shown while it cannot be reached. */
const lastKnown = new Map<string, Workspace[]>();

/** The workspaces this person joined on other servers (their direct spaces there left out). */
export async function loadRemoteWorkspaces(): Promise<Workspace[]> {
  const username = me.value?.username;
  if (!username) return [];
  const hosts = await knownHosts(username);
  const problems: Record<string, ApiError> = {};
  const lists = await Promise.all(
    hosts.map(async (host) => {
      try {
        const d = await gqlAt<{ me: { id: string }; myWorkspaces: Workspace[] }>(host, REMOTE_SELF);
        remoteSelf.value = { ...remoteSelf.value, [host]: d.me.id };
        // A full first page may have more behind it; a host from before paging answered every
        // workspace at once and refuses the cursor, so its list stands as it came.
        const all =
          d.myWorkspaces.length === REMOTE_PAGE
            ? await readAllAt(host).catch(() => d.myWorkspaces)
            : d.myWorkspaces;
        const list = all.filter((w) => !w.isDirect);
        lastKnown.set(host, list);
        return list;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        problems[host] = err;
        return lastKnown.get(host) ?? [];
      }
    }),
  );
  remoteProblems.value = problems;
  const out = lists.flat();
  for (const w of out) tagId(w.id, hostOfList(w.id, hosts, lists));
  return out;
}

/**
 * The hosts to ask: those this browser remembers and those the relay lists for the account
 * (`myRemoteHosts`), so a workspace joined on another device shows here too. A relay that lists
 * none (an older server, or one that is not a relay) leaves this browser's own list.
 */
async function knownHosts(username: string): Promise<string[]> {
  const local = storedHosts(username);
  let listed: string[] = [];
  try {
    listed = (await gqlAt<{ myRemoteHosts: string[] }>(null, MY_REMOTE_HOSTS)).myRemoteHosts;
    isRelay.value = true;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
  }
  for (const host of listed) addRemoteHost(username, host);
  const all = listed.length === 0 ? local : storedHosts(username);
  // Hosts with nothing for the person are left out for a day (quiet-hosts.ts).
  const quiet = quietHosts(username);
  remoteHosts.value = all.filter((h) => !quiet.has(h));
  return remoteHosts.value;
}

/** Hosts that did not answer one of this load's lists (so they may have something). */
const unanswered = new Set<string>();

/**
 * After a load: the hosts asked that had nothing for the person (no workspace, no direct
 * conversation, no DM request) are left out of the next loads for a day (quiet-hosts.ts).
 */
export function noteHostsAfterLoad(ids: string[]): void {
  const username = me.value?.username;
  if (!username) return;
  const withSomething = new Set(ids.flatMap((id) => hostOfId(id) ?? []));
  for (const host of Object.keys(remoteProblems.value)) unanswered.add(host);
  const quiet = noteQuietHosts(username, remoteHosts.value, withSomething, unanswered);
  unanswered.clear();
  // Not asked for anything more this time either (the unread count read next).
  if (quiet.size > 0) remoteHosts.value = remoteHosts.value.filter((h) => !quiet.has(h));
}

/**
 * A live event named a host this load did not ask (a person of a quiet host wrote to her): the
 * host is woken; answers whether everything should be read again.
 */
export function wokenBy(hostServerId: string | null | undefined): boolean {
  const username = me.value?.username;
  if (!hostServerId || !username || remoteHosts.value.includes(hostServerId)) return false;
  // At most once a minute a host: a host still found with nothing is not read again per event.
  const now = Date.now();
  if (now - (wokenAt.get(hostServerId) ?? 0) < 60_000) return false;
  wokenAt.set(hostServerId, now);
  wakeHost(username, hostServerId);
  return true;
}

/** When each host was last woken by an event. */
const wokenAt = new Map<string, number>();

async function readAllAt(host: string): Promise<Workspace[]> {
  const all: Workspace[] = [];
  let after: string | null = null;
  for (;;) {
    const d: { myWorkspaces: Array<Workspace & { cursor: string }> } = await gqlAt(
      host,
      REMOTE_WORKSPACES,
      { after, limit: REMOTE_PAGE },
    );
    all.push(...d.myWorkspaces);
    if (d.myWorkspaces.length < REMOTE_PAGE) return all;
    after = d.myWorkspaces[d.myWorkspaces.length - 1]!.cursor;
  }
}

function hostOfList(id: string, hosts: string[], lists: Workspace[][]): string {
  const i = lists.findIndex((l) => l.some((w) => w.id === id));
  return hosts[i]!;
}

/** One list read from each host at once; a host that refuses or cannot be reached gives none. */
async function fromEachHost<T>(read: (host: string) => Promise<T[]>): Promise<T[]> {
  const lists = await Promise.all(
    remoteHosts.value.map(async (host) => {
      try {
        return await read(host);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        unanswered.add(host);
        return [];
      }
    }),
  );
  return lists.flat();
}

/**
 * The person's direct conversations with people of each host (docs/federation.md: they live in
 * the person's direct space there), read from each host's inbox through the relay. They show in
 * the one list of direct messages, each marked with its host. A host that cannot be reached
 * leaves its own out until the next load; its alert shows with its workspaces.
 */
export function loadRemoteInboxes(): Promise<Conversation[]> {
  return fromEachHost(async (host) => {
    const d = await gqlAt<{ inboxConversations: { items: Conversation[] } }>(host, INBOX);
    return d.inboxConversations.items;
  });
}

/**
 * The DM requests waiting for the person on each host (someone there wrote first): listed with
 * this server's, and answered on the host (their ids are the host's).
 */
export function loadRemoteDmRequests(): Promise<DmRequest[]> {
  return fromEachHost(async (host) => {
    const d = await gqlAt<{ dmRequests: DmRequest[] }>(host, DM_REQUESTS);
    return d.dmRequests;
  });
}

export function forgetRemote(): void {
  forgetRemoteState();
  forgetPictures();
  lastKnown.clear();
  remoteProblems.value = {};
}

/**
 * An invite link of another server (`https://<host>/invite/<token>`): the host's id and the
 * token; null for a link of this server or a bare code.
 */
export function remoteInvite(text: string): { host: string; token: string } | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  const m = /^\/invite\/([^/?#\s]+)/.exec(url.pathname);
  if (!m || url.host.toLowerCase() === location.host.toLowerCase()) return null;
  return { host: url.host.toLowerCase(), token: decodeURIComponent(m[1] as string) };
}

/** Joins a workspace hosted elsewhere, through this server's relay route. */
export async function joinRemote(host: string, token: string): Promise<Workspace> {
  const username = me.value?.username;
  const hasKey =
    !!username && (await storedAccounts()).some((a) => a.username === username.toLowerCase());
  if (!hasKey) {
    throw new ApiError('this browser holds no device key for the account', 'NO_DEVICE_KEY', {
      hostServerId: host,
    });
  }
  const d = await gqlAt<{ joinWorkspace: Workspace }>(host, JOIN_WORKSPACE, { token });
  addRemoteHost(username!, host);
  wakeHost(username!, host);
  tagId(d.joinWorkspace.id, host);
  return d.joinWorkspace;
}
