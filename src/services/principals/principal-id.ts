import { validation } from '../../errors.js';
import { isId } from '../../lib/ids.js';
import { isServerId } from '../../lib/server-id.js';

import type { PrincipalKind } from '../../db/tables/moderation.js';

/**
 * A principal is whoever can act on this server, named by a `kind:value` id (docs/moderation.md):
 *
 * - `user:<accountId>`           a local account (or the account a remote person holds here);
 *                                `@<username>` is accepted as input and stored as `user:<id>`
 * - `key:<keyIdentityId>`        a key identity (`kid_...`), whichever account holds it
 * - `server:<host>`              every person whose home server is that host
 * - `remote:<username>@<host>`   one person from another server
 *
 * Hosts and remote usernames are compared lower-case; a host is a server id (lib/server-id.ts).
 */
export type ParsedPrincipal =
  | { kind: 'user'; id: string; accountId: string }
  | { kind: 'username'; username: string }
  | { kind: 'key'; id: string; keyIdentityId: string }
  | { kind: 'server'; id: string; host: string }
  | { kind: 'remote'; id: string; username: string; host: string };

export const PRINCIPAL_ID_MAX = 300;

const KEY_RE = /^[A-Za-z0-9_-]{1,100}$/;
const REMOTE_USER_RE = /^[\p{L}\p{N}._-]{1,64}$/u;

const malformed = (input: string) =>
  validation(
    `"${input.length > 80 ? `${input.slice(0, 80)}...` : input}" is not a principal id; use user:<accountId>, @<username>, key:<keyIdentityId>, server:<host> or remote:<username>@<host>`,
  );

/** Parses a principal id as an operator types it; VALIDATION when malformed. */
export function parsePrincipal(input: unknown): ParsedPrincipal {
  if (typeof input !== 'string') throw validation('principalId must be a string');
  const text = input.trim();
  if (text.length === 0 || text.length > PRINCIPAL_ID_MAX) throw malformed(text);
  if (text.startsWith('@')) {
    const username = text.slice(1);
    if (username.length === 0 || username.length > 64) throw malformed(text);
    return { kind: 'username', username };
  }
  const colon = text.indexOf(':');
  if (colon === -1) throw malformed(text);
  const kind = text.slice(0, colon).toLowerCase();
  const value = text.slice(colon + 1);
  switch (kind) {
    case 'user': {
      const id = value.toLowerCase();
      if (!isId(id)) throw malformed(text);
      return { kind: 'user', id: `user:${id}`, accountId: id };
    }
    case 'key':
      if (!KEY_RE.test(value)) throw malformed(text);
      return { kind: 'key', id: `key:${value}`, keyIdentityId: value };
    case 'server': {
      const host = value.toLowerCase();
      if (!isServerId(host)) throw malformed(text);
      return { kind: 'server', id: `server:${host}`, host };
    }
    case 'remote': {
      const at = value.lastIndexOf('@');
      if (at <= 0) throw malformed(text);
      const username = remoteUsernameKey(value.slice(0, at));
      const host = value.slice(at + 1).toLowerCase();
      if (!REMOTE_USER_RE.test(username) || !isServerId(host)) throw malformed(text);
      return { kind: 'remote', id: `remote:${username}@${host}`, username, host };
    }
    default:
      throw malformed(text);
  }
}

/** The stored kind of a canonical principal id. */
export function principalKind(id: string): PrincipalKind {
  return id.slice(0, id.indexOf(':')) as PrincipalKind;
}

/**
 * Every principal id an account falls under: its own, its key identity's, and for a person from
 * another server the server's and the person's.
 */
export function principalIdsOfAccount(account: {
  id: string;
  keyIdentityId: string | null;
  homeServer: string | null;
  usernameKey: string;
}): string[] {
  const ids = [`user:${account.id}`];
  if (account.keyIdentityId) ids.push(`key:${account.keyIdentityId}`);
  if (account.homeServer) {
    const host = account.homeServer.toLowerCase();
    // A person federation created here has a username key of `<name>@<host>` already (the key
    // is unique across local and remote accounts); older rows hold the bare name.
    const key = account.usernameKey.endsWith(`@${host}`)
      ? account.usernameKey
      : `${account.usernameKey}@${host}`;
    ids.push(`server:${host}`, `remote:${key}`);
  }
  return ids;
}

/**
 * How a remote person's username is compared (`remote:<username>@<host>`): NFKC, then case
 * folded, as local usernames are; the one place both the parser and the block check take it from.
 */
export function remoteUsernameKey(username: string): string {
  return username.normalize('NFKC').toLowerCase();
}
