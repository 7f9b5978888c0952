import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';

import type { CompiledQuery } from 'kysely';

import type { IssuedSession, SessionInfo, SessionView } from '../../auth/session.js';
import type { Db, Executor } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';
import { isId, newId, randomToken } from '../../lib/ids.js';
import { Lru } from '../../lib/lru.js';
import { toAccountView, type AccountView } from '../accounts/account-view.js';
import { writeThen } from '../../db/statements/write-then.js';
import { PrefetchedAccess } from '../conversations/prefetched-access.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/keyset.js';
import { blockedRefusal, isAccountBlocked } from '../principals/blocked.js';

import { notFound } from '../../errors.js';

import {
  bindSessionToDevice,
  endSessions,
  findDeadSessionIds,
  findLiveSessionWithAccess,
  insertSessionStatement,
  insertSessionUnlessBlocked,
  listLiveSessions,
  type NewSessionRow,
} from './queries.js';

export type { IssuedSession, SessionView } from '../../auth/session.js';

/**
 * A session as `resolve` reads it: the session (auth/session.ts) and the account read in the same
 * statement, at the start of the request: `me` answers from it on the first operation of an HTTP
 * request, saving a read (graphql/context.ts).
 */
export interface ResolvedSession extends SessionInfo {
  account: AccountView;
}

export type SessionEndReason =
  | 'logout'
  | 'logout_other_sessions'
  | 'identity_key_enrolled'
  | 'password_reset'
  | 'password_changed'
  | 'session_revoked'
  | 'account_deletion_requested'
  | 'device_revoked'
  | 'identity_recovery'
  | 'account_purged'
  | 'principal_blocked'
  | 'ended_by_operator';

/**
 * Records a device's last use when a session starts on it (`startOnDevice`). The devices area
 * provides it and wiring.ts registers it: sessions do not import devices, which start and end
 * sessions.
 */
export interface DeviceUseHook {
  /**
   * PostgreSQL: the write that follows the session's insert in one statement (`writeThen`),
   * conditioned on `FIRST_WROTE` (db/statements/write-then.ts).
   */
  afterInsert(db: Executor, deviceId: string, at: number): CompiledQuery;
  /** SQLite: the write, deferred into the session's transaction (`tx.defer`). */
  inTransaction(tx: Tx, deviceId: string, at: number): Promise<void>;
}

/** Longer session tokens are refused unread (issued tokens are 43 characters). */
const TOKEN_LENGTH_MAX = 200;

/** Session tokens whose digests are kept (SessionService `digests`). */
const TOKEN_DIGESTS_KEPT = 10_000;

export const hashSessionToken = (token: string): string =>
  createHash('sha256').update(token).digest('base64url');

/**
 * Starts, reads and ends sessions. Emits `ended` with the ended session ids after commit, so this
 * process can close their WebSocket connections at once.
 */
export class SessionService {
  readonly events = new EventEmitter();
  /**
   * Each recent session token's digests: the hash its session is read by and the CSRF token it
   * expects, kept for the tokens of the last `TOKEN_DIGESTS_KEPT` requests. Every request
   * computed both (two SHA-256 passes and an HMAC's setup: about 40,000 instructions of a send,
   * bench `instructions`) for the same few tokens. A token that is not a session's is kept as
   * briefly as any other and changes no answer.
   */
  private readonly digests = new Lru<string, { tokenHash: string; csrf: Buffer }>(
    TOKEN_DIGESTS_KEPT,
  );
  private deviceUse: DeviceUseHook | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlDays: number,
    private readonly cookieSecret: Buffer,
  ) {}

  /** Who records a device's use when a session starts on it (wiring.ts). */
  onDeviceSession(hook: DeviceUseHook): void {
    this.deviceUse = hook;
  }

  private digestsOf(token: string): { tokenHash: string; csrf: Buffer } {
    let digests = this.digests.get(token);
    if (!digests) {
      digests = {
        tokenHash: hashSessionToken(token),
        csrf: Buffer.from(this.csrfTokenFor(token)),
      };
      // A longer token is no session's: not kept, so a long cookie cannot fill the memory.
      if (token.length <= TOKEN_LENGTH_MAX) this.digests.set(token, digests);
    }
    return digests;
  }

  /** The CSRF token bound to a session token (contract: HMAC over the session token). */
  csrfTokenFor(sessionToken: string): string {
    return createHmac('sha256', this.cookieSecret)
      .update(`csrf:${sessionToken}`)
      .digest('base64url');
  }

  /** Whether `header` is the CSRF token of `sessionToken`, compared in constant time. */
  csrfMatches(sessionToken: string, header: string): boolean {
    const expected = this.digestsOf(sessionToken).csrf;
    const given = Buffer.from(header);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  async start(
    executor: Executor,
    input: {
      accountId: string;
      deviceId?: string | null;
      ip?: string | null;
      userAgent?: string | null;
    },
  ): Promise<IssuedSession> {
    const { row, issued } = this.newSession(input);
    // Every way of signing in ends here: a principal block refuses them all (FORBIDDEN). The
    // check is part of the insert.
    if (!(await insertSessionUnlessBlocked(executor, row))) await this.refuse(executor, row);
    return issued;
  }

  /**
   * `start` for a device's own sign-in, recording the device's last use only when the session
   * starts: on PostgreSQL one statement (`writeThen`), no `BEGIN` or `COMMIT`; on SQLite one
   * transaction, one commit.
   */
  async startOnDevice(input: {
    accountId: string;
    deviceId: string;
    ip?: string | null;
    userAgent?: string | null;
  }): Promise<IssuedSession> {
    const { row, issued } = this.newSession(input);
    const now = row.createdAt;
    const db = this.db.kysely;
    const deviceUse = this.deviceUse;
    if (!deviceUse) throw new Error('no device-use hook: wiring.ts registers it');
    if (this.db.dialect === 'postgres') {
      const { rows } = await db.executeQuery(
        writeThen(insertSessionStatement(db, row), deviceUse.afterInsert(db, input.deviceId, now)),
      );
      if (Number(rows[0]?.written ?? 0) !== 1) await this.refuse(db, row);
      return issued;
    }
    return this.db.transaction(async (tx) => {
      if (!(await insertSessionUnlessBlocked(tx.db, row))) await this.refuse(tx.db, row);
      await deviceUse.inTransaction(tx, input.deviceId, now);
      return issued;
    });
  }

  private newSession(input: {
    accountId: string;
    deviceId?: string | null;
    ip?: string | null;
    userAgent?: string | null;
  }): { row: NewSessionRow; issued: IssuedSession } {
    const now = this.clock.now().getTime();
    const token = randomToken(32);
    const expiresAt = now + this.ttlDays * DAY_MS;
    const row: NewSessionRow = {
      id: newId(),
      tokenHash: hashSessionToken(token),
      accountId: input.accountId,
      deviceId: input.deviceId ?? null,
      createdAt: now,
      expiresAt,
      ip: input.ip ?? null,
      userAgent: input.userAgent?.slice(0, 512) ?? null,
    };
    const issued: IssuedSession = {
      sessionId: row.id,
      token,
      csrfToken: this.csrfTokenFor(token),
      expiresAt,
      maxAgeSeconds: this.ttlDays * 86400,
    };
    return { row, issued };
  }

  /** Why a session's insert wrote nothing: a principal block (FORBIDDEN), else the account is gone. */
  private async refuse(executor: Executor, row: NewSessionRow): Promise<never> {
    if (await isAccountBlocked(executor, row.accountId)) throw blockedRefusal();
    throw notFound('account');
  }

  /** The live session of a cookie token, or null (missing, unknown, ended or expired). */
  async resolve(token: string | undefined): Promise<ResolvedSession | null> {
    return (await this.resolveWithAccess(token, null)).session;
  }

  /**
   * The live session of a cookie token and, on PostgreSQL, its account's access to
   * `conversationId` read in the same statement (conversations/prefetched-access.ts): absent
   * on SQLite, for an anonymous request and when no conversation is named.
   */
  async resolveWithAccess(
    token: string | undefined,
    conversationId: string | null,
  ): Promise<{ session: ResolvedSession | null; access?: PrefetchedAccess }> {
    if (!token || token.length > TOKEN_LENGTH_MAX) return { session: null };
    const found = await findLiveSessionWithAccess(
      this.db.kysely,
      this.digestsOf(token).tokenHash,
      this.clock.now().getTime(),
      conversationId,
    );
    if (!found) return { session: null };
    const row = found.session;
    const session: ResolvedSession = {
      sessionId: row.sessionId,
      accountId: row.accountId,
      username: row.username,
      deviceId: row.deviceId,
      expiresAt: row.expiresAt,
      homeServer: row.homeServer,
      isOperator: row.isOperator === 1,
      account: toAccountView({
        id: row.accountId,
        username: row.username,
        displayName: row.displayName,
        email: row.email,
        createdAt: row.accountCreatedAt,
        isOperator: row.isOperator,
        deletionScheduledFor: row.deletionScheduledFor,
        homeServer: row.homeServer,
        avatarPath: row.avatarPath,
      }),
    };
    if (!found.access || conversationId === null) return { session };
    return {
      session,
      access: new PrefetchedAccess(conversationId, row.accountId, found.access.row),
    };
  }

  /**
   * Ends sessions inside the caller's transaction; the `ended` event fires after commit.
   */
  async end(
    tx: Tx,
    filter: { sessionId?: string; accountId?: string; exceptSessionId?: string; deviceId?: string },
    reason: SessionEndReason,
  ): Promise<string[]> {
    const ids = await endSessions(tx.db, filter, this.clock.now().getTime(), reason);
    if (ids.length > 0) tx.onCommit(() => this.announceEnded(ids, reason));
    return ids;
  }

  /** Binds a live session to a device, in the caller's transaction (identity enrolment). */
  async bindToDevice(tx: Tx, sessionId: string, deviceId: string): Promise<void> {
    await bindSessionToDevice(tx.db, sessionId, deviceId);
  }

  /** Tells this process's listeners (the WebSocket layer) that sessions ended. */
  announceEnded(sessionIds: string[], reason: SessionEndReason | string): void {
    this.events.emit('ended', sessionIds, reason);
  }

  onEnded(listener: (sessionIds: string[], reason: string) => void): () => void {
    this.events.on('ended', listener);
    return () => this.events.off('ended', listener);
  }

  /** A page of the live sessions of the caller's account, newest first. */
  async listMine(session: SessionInfo, args: KeysetArgs = {}): Promise<SessionView[]> {
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    const rows = await listLiveSessions(
      this.db.kysely,
      session.accountId,
      this.clock.now().getTime(),
      page,
    );
    return keysetRows(rows, page).map((r) => ({ ...r, current: r.id === session.sessionId }));
  }

  /**
   * The live sessions of any account, newest first, for the operator CLI (`svc session list`);
   * `current` is always false there.
   */
  async listOf(accountId: string): Promise<SessionView[]> {
    const rows = await listLiveSessions(this.db.kysely, accountId, this.clock.now().getTime());
    return rows.map((r) => ({ ...r, current: false }));
  }

  /** Ends the calling session (`logout`); whether it was live. */
  async logout(session: SessionInfo): Promise<boolean> {
    const ended = await this.db.transaction((tx) =>
      this.end(tx, { sessionId: session.sessionId }, 'logout'),
    );
    return ended.length > 0;
  }

  /** Ends every session of the caller's account but the calling one; answers how many. */
  async endOthers(session: SessionInfo): Promise<number> {
    const ended = await this.db.transaction((tx) =>
      this.end(
        tx,
        { accountId: session.accountId, exceptSessionId: session.sessionId },
        'logout_other_sessions',
      ),
    );
    return ended.length;
  }

  /** Ends one live session of the caller's account; NOT_FOUND for any other id. */
  async revokeMine(session: SessionInfo, sessionId: string): Promise<void> {
    if (!isId(sessionId)) throw notFound('session');
    const ended = await this.db.transaction((tx) =>
      this.end(tx, { accountId: session.accountId, sessionId }, 'session_revoked'),
    );
    if (ended.length === 0) throw notFound('session');
  }

  /** Of these session ids, the ones no longer live; for the WebSocket recheck. */
  async deadAmong(ids: string[]): Promise<string[]> {
    return findDeadSessionIds(this.db.kysely, ids, this.clock.now().getTime());
  }
}
