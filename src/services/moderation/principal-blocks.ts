import { actorId, assertInstanceOperator, personOf, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { PrincipalKind } from '../../db/tables/moderation.js';
import type { Tx } from '../../db/transaction.js';
import { conflict, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isUniqueViolation } from '../../db/errors.js';
import { lookupKey } from '../accounts/index.js';
import { deleteReactionsBy, type MessageRemover } from '../messages/index.js';
import type { SessionService } from '../sessions/index.js';

import type { AuditLog } from '../audit/index.js';
import {
  blockedRefusal,
  findBlocks,
  parsePrincipal,
  principalIdsOfAccount,
  remoteUsernameKey,
  type ParsedPrincipal,
} from '../principals/index.js';
import {
  accountsOfPrincipal,
  countOtherUnblockedOperators,
  deletePrincipalBlock,
  findPrincipalBlock,
  insertPrincipalBlock,
  lockPrincipalBlocks,
  listPrincipalBlocks,
  messagesBy,
  usernamesByIds,
  usernamesByKeyIdentity,
  workspacesOwnedBy,
} from './queries.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

/** Characters a block's reason may have. */
export const PRINCIPAL_REASON_MAX = 500;

export interface PrincipalBlockView {
  principalId: string;
  kind: PrincipalKind;
  reason: string | null;
  cascade: boolean;
  createdAt: number;
  createdBy: string;
  /** The local account holding the principal; null when none (always null for `server:`). */
  username: string | null;
}

export interface BlockResult {
  block: PrincipalBlockView;
  sessionsEnded: number;
  messagesRemoved: number;
  reactionsRemoved: number;
  workspacesDeleted: number;
}

/**
 * Deletes one workspace inside the block's transaction: the workspace area's own deletion, so
 * its deletion hooks run and members get MemberLeft and WorkspaceDeleted.
 */
export type WorkspaceRemover = (tx: Tx, workspaceId: string, by: string) => Promise<void>;

type Resolved = Exclude<ParsedPrincipal, { kind: 'username' }>;

/**
 * Runs in a block's transaction with the accounts it covers (federation tells the hosts a local
 * person used that their devices are revoked, through its outbox).
 */
export type BlockHook = (
  tx: Tx,
  accounts: ReadonlyArray<{ id: string; username: string; homeServer: string | null }>,
) => Promise<void>;

/**
 * Principal blocks: an operator shuts a local account, a key identity, a remote server or a
 * remote person out of this server. A block ends their sessions, refuses their sign-ins and
 * signups, and with `cascade` also removes what they posted and the workspaces they own.
 */
export class PrincipalBlockService {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      sessions: SessionService;
      audit: AuditLog;
      removeWorkspace: WorkspaceRemover;
      messages: MessageRemover;
    },
  ) {}

  private readonly blockHooks: BlockHook[] = [];

  /** Adds work to every block's transaction. */
  onBlocked(hook: BlockHook): void {
    this.blockHooks.push(hook);
  }

  /** Parses an id and turns `@username` into `user:<id>` (NOT_FOUND for no such account). */
  async resolve(input: unknown): Promise<Resolved> {
    const parsed = parsePrincipal(input);
    if (parsed.kind !== 'username') return parsed;
    const key = lookupKey(parsed.username);
    const row = await this.deps.db.kysely
      .selectFrom('account')
      .select('id')
      .where('usernameKey', '=', key)
      .where('deletedAt', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound(`account "@${parsed.username}"`);
    return { kind: 'user', id: `user:${row.id}`, accountId: row.id };
  }

  async block(
    actor: Actor,
    input: { principalId: unknown; reason?: unknown; cascade?: boolean | null },
  ): Promise<BlockResult> {
    assertInstanceOperator(actor);
    const principal = await this.resolve(input.principalId);
    const reason = checkReason(input.reason);
    const cascade = input.cascade === true;
    const by = actorId(actor);
    const now = this.deps.clock.now().getTime();
    try {
      return await this.deps.db.transaction((tx) =>
        this.blockInTx(tx, actor, principal, { reason, cascade, by, now }),
      );
    } catch (err) {
      // The same principal blocked twice at the same moment: the second is told so.
      if (isUniqueViolation(err)) throw alreadyBlocked(principal.id, null);
      throw err;
    }
  }

  private async blockInTx(
    tx: Tx,
    actor: Actor,
    principal: Resolved,
    o: { reason: string | null; cascade: boolean; by: string; now: number },
  ): Promise<BlockResult> {
    const { reason, cascade, by, now } = o;
    await lockPrincipalBlocks(tx.db);
    const existing = await findPrincipalBlock(tx.db, principal.id);
    if (existing) throw alreadyBlocked(principal.id, Number(existing.createdAt));
    const accounts = await accountsOfPrincipal(tx.db, principal);
    if (principal.kind === 'user' && (accounts.length === 0 || accounts[0]?.deletedAt !== null)) {
      throw notFound(`account ${principal.accountId}`);
    }
    const ids = accounts.map((a) => a.id);
    const self = personOf(actor);
    if (self && ids.includes(self.accountId)) {
      throw validation('you cannot block yourself');
    }
    const operators = accounts.filter((a) => a.isOperator === 1 && a.deletedAt === null);
    if (operators.length > 0 && (await countOtherUnblockedOperators(tx.db, ids)) === 0) {
      throw validation(
        'this would block the last instance operator; grant the role to another account first',
      );
    }
    await insertPrincipalBlock(tx.db, {
      principalId: principal.id,
      kind: principal.kind,
      reason,
      cascade: cascade ? 1 : 0,
      createdAt: now,
      createdBy: by,
    });
    let sessionsEnded = 0;
    for (const id of ids) {
      sessionsEnded += (await this.deps.sessions.end(tx, { accountId: id }, 'principal_blocked'))
        .length;
    }
    const live = accounts.filter((a) => a.deletedAt === null);
    for (const hook of this.blockHooks) await hook(tx, live);
    const removed = cascade
      ? await this.cascade(tx, ids, by, now)
      : { messagesRemoved: 0, reactionsRemoved: 0, workspacesDeleted: 0 };
    await this.deps.audit.record(tx, {
      action: 'principal.block',
      actorId: by,
      target: principal.id,
      reason,
      details: { cascade, sessionsEnded, ...removed },
    });
    const block = await this.view(tx, principal.id);
    return { block, sessionsEnded, ...removed };
  }

  /**
   * What `cascade` touches (docs/moderation.md): every message the accounts wrote is removed as
   * a moderator's delete removes it (text gone, `isDeleted`, replies kept), with its edit
   * history, reactions and pins; every reaction they added; and every workspace they own, with
   * all it holds. Their memberships elsewhere, direct conversations and files stay.
   */
  private async cascade(tx: Tx, accountIds: string[], by: string, now: number) {
    const workspaces = await workspacesOwnedBy(tx.db, accountIds);
    for (const ws of workspaces) await this.deps.removeWorkspace(tx, ws.id, by);
    // Messages inside the deleted workspaces went with them; what is left lives elsewhere.
    const messages = await messagesBy(tx.db, accountIds);
    const removed = await this.deps.messages.remove(
      tx,
      messages.map((m) => m.id),
      { at: now, by },
    );
    const reactionsRemoved = await deleteReactionsBy(tx.db, accountIds);
    return {
      messagesRemoved: removed.length,
      reactionsRemoved,
      workspacesDeleted: workspaces.length,
    };
  }

  /** Lifts a block; NOT_FOUND when the principal is not blocked. Removed content stays removed. */
  async unblock(actor: Actor, input: unknown): Promise<PrincipalBlockView> {
    assertInstanceOperator(actor);
    const principal = await this.resolve(input);
    const by = actorId(actor);
    return this.deps.db.transaction(async (tx) => {
      if (!(await findPrincipalBlock(tx.db, principal.id))) {
        throw notFound(`block of ${principal.id}`);
      }
      const view = await this.view(tx, principal.id);
      await deletePrincipalBlock(tx.db, principal.id);
      await this.deps.audit.record(tx, {
        action: 'principal.unblock',
        actorId: by,
        target: principal.id,
      });
      return view;
    });
  }

  /**
   * Blocks, newest first, with the username of the local account holding each: a page of them,
   * or every one without `args` (the CLI).
   */
  async list(actor: Actor, args?: KeysetArgs): Promise<PrincipalBlockView[]> {
    assertInstanceOperator(actor);
    const db = this.deps.db.kysely;
    if (!args) return this.views(db, await listPrincipalBlocks(db));
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    return this.views(db, keysetRows(await listPrincipalBlocks(db, page), page));
  }

  private async view(tx: Tx, principalId: string): Promise<PrincipalBlockView> {
    const row = await findPrincipalBlock(tx.db, principalId);
    if (!row) throw notFound(`block of ${principalId}`);
    return (await this.views(tx.db, [row]))[0] as PrincipalBlockView;
  }

  private async views(
    db: Tx['db'] | Db['kysely'],
    rows: Awaited<ReturnType<typeof listPrincipalBlocks>>,
  ): Promise<PrincipalBlockView[]> {
    const userIds: string[] = [];
    const keyIds: string[] = [];
    for (const r of rows) {
      const value = r.principalId.slice(r.principalId.indexOf(':') + 1);
      if (r.kind === 'user') userIds.push(value);
      if (r.kind === 'key') keyIds.push(value);
    }
    const byId = await usernamesByIds(db, userIds);
    const byKey = await usernamesByKeyIdentity(db, keyIds);
    const out: PrincipalBlockView[] = [];
    for (const r of rows) {
      const value = r.principalId.slice(r.principalId.indexOf(':') + 1);
      let username: string | null = null;
      if (r.kind === 'user') username = byId.get(value) ?? null;
      else if (r.kind === 'key') username = byKey.get(value) ?? null;
      else if (r.kind === 'remote') {
        // A row stored before server ids were checked whole may no longer parse: no username.
        const p = parsedOrNull(r.principalId);
        if (p?.kind === 'remote') {
          const [account] = await accountsOfPrincipal(db, p);
          username = account?.username ?? null;
        }
      }
      out.push({
        principalId: r.principalId,
        kind: r.kind,
        reason: r.reason,
        cascade: r.cascade === 1,
        createdAt: Number(r.createdAt),
        createdBy: r.createdBy,
        username,
      });
    }
    return out;
  }

  /**
   * FORBIDDEN when a block covers any of the given facts about someone signing in or up: the
   * account, its key identity, or (for a person from another server) the server and the person.
   */
  async assertNotBlocked(who: {
    accountId?: string | null;
    keyIdentityId?: string | null;
    homeServer?: string | null;
    username?: string | null;
  }): Promise<void> {
    const db = this.deps.db.kysely;
    const ids: string[] = [];
    if (who.accountId) {
      const account = await db
        .selectFrom('account')
        .select(['id', 'keyIdentityId', 'homeServer', 'usernameKey'])
        .where('id', '=', who.accountId)
        .executeTakeFirst();
      if (account) ids.push(...principalIdsOfAccount(account));
      else ids.push(`user:${who.accountId}`);
    }
    if (who.keyIdentityId) ids.push(`key:${who.keyIdentityId}`);
    if (who.homeServer) {
      const host = who.homeServer.toLowerCase();
      ids.push(`server:${host}`);
      if (who.username) ids.push(`remote:${remoteUsernameKey(who.username)}@${host}`);
    }
    if ((await findBlocks(db, ids)).length > 0) throw blockedRefusal();
  }

  /** Whether another server is blocked (for the server-to-server API). */
  async isServerBlocked(host: string): Promise<boolean> {
    return (await findBlocks(this.deps.db.kysely, [`server:${host.toLowerCase()}`])).length > 0;
  }
}

const alreadyBlocked = (id: string, since: number | null) =>
  conflict(
    `${id} is already blocked${since === null ? '' : ` (since ${new Date(since).toISOString()})`}; unblock it first to block it again`,
  );

function checkReason(value: unknown): string | null {
  if (value !== undefined && value !== null && typeof value !== 'string') {
    throw validation('reason must be a string');
  }
  const reason = typeof value === 'string' ? value.trim() || null : null;
  if (reason !== null && [...reason].length > PRINCIPAL_REASON_MAX) {
    throw validation(`reason must be at most ${PRINCIPAL_REASON_MAX} characters`);
  }
  return reason;
}

function parsedOrNull(id: string): ReturnType<typeof parsePrincipal> | null {
  try {
    return parsePrincipal(id);
  } catch {
    return null;
  }
}
