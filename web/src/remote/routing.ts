import { signal } from '@preact/signals';

// Which server a request belongs to. Everything the client reads from a host is remembered by id
// (workspaces, conversations, messages, people, attachments): a request whose variables name
// one of those ids goes to that host through the relay, every other request to this server. So
// the screens need not know where a workspace lives; ids are random and never shared between
// servers.

const owner = new Map<string, string>();
/**
 * The direct space has this one id on every server (docs/direct-messages.md): it names no host.
 * A direct conversation with a person of a host lives in the direct space there, and goes to
 * the host by its own id.
 */
export const DIRECT_SPACE_ID = '00000000-0000-7000-8000-000000000000';

function own(id: string, host: string): void {
  if (id !== DIRECT_SPACE_ID) owner.set(id, host);
}

/**
 * The hosts asked at this load: those whose workspaces this person joined, kept per account in
 * this browser and listed by the relay, less those with nothing for the person (quiet-hosts.ts).
 */
export const remoteHosts = signal<string[]>([]);
/** Whether this server relays (it answered `myRemoteHosts`, a field only a relay has). */
export const isRelay = signal(false);
/** The person's own account id on each host (`<name>@<relay>` there). */
export const remoteSelf = signal<Record<string, string>>({});

const HOSTS = (username: string) => `svc-remote-hosts:${username.toLowerCase()}`;

/** Every host this browser remembers for the account (quiet ones too). */
export function storedHosts(username: string): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(HOSTS(username)) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((h): h is string => typeof h === 'string') : [];
  } catch {
    return [];
  }
}

/** Remembers a host for the account and asks it from now on. */
export function addRemoteHost(username: string, host: string): void {
  const stored = storedHosts(username);
  if (!stored.includes(host)) {
    localStorage.setItem(HOSTS(username), JSON.stringify([...stored, host]));
  }
  if (!remoteHosts.value.includes(host)) remoteHosts.value = [...remoteHosts.value, host];
}

export function forgetRemoteState(): void {
  owner.clear();
  remoteHosts.value = [];
  remoteSelf.value = {};
  isRelay.value = false;
}

/** Remembers every `id` (and `...Id`) in a host's answer as that host's. */
export function tagIds(host: string, value: unknown, depth = 0): void {
  if (depth > 12 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const v of value) tagIds(host, v, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' && (k === 'id' || k.endsWith('Id'))) own(v, host);
    else if (Array.isArray(v) && k.endsWith('Ids')) {
      for (const x of v) if (typeof x === 'string') own(x, host);
    } else tagIds(host, v, depth + 1);
  }
}

export function tagId(id: string, host: string): void {
  own(id, host);
}

/** The host a value refers to: the first id among its strings that belongs to a host. */
export function hostOf(value: unknown, depth = 0): string | null {
  if (typeof value === 'string') return owner.get(value) ?? null;
  if (depth > 8 || value === null || typeof value !== 'object') return null;
  for (const v of Array.isArray(value) ? value : Object.values(value as object)) {
    const h = hostOf(v, depth + 1);
    if (h) return h;
  }
  return null;
}

/** The host of a workspace or conversation, or null when it lives on this server. */
export function hostOfId(id: string | null | undefined): string | null {
  return id ? (owner.get(id) ?? null) : null;
}

/** Is this user id the signed-in person, here or on a host? */
export function isSelf(userId: string | null | undefined, localId: string | undefined): boolean {
  if (!userId) return false;
  return userId === localId || Object.values(remoteSelf.value).includes(userId);
}

/**
 * A live event of a host (it came on relayStream for a workspace or conversation of a host, and
 * the relay names the host in `hostServerId`): the ids it carries (a new message, a reaction's
 * message, a direct conversation a person of the host just started) belong to that host too.
 */
export function tagEvent(e: {
  serverId: string | null;
  conversationId: string | null;
  hostServerId?: string | null;
  payload: unknown;
}): void {
  const host = e.hostServerId ?? hostOfId(e.conversationId) ?? hostOfId(e.serverId);
  if (!host) return;
  if (e.conversationId) tagId(e.conversationId, host);
  if (e.serverId) tagId(e.serverId, host);
  tagIds(host, e.payload);
}
