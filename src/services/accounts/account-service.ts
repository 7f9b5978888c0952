import { actingAccountId, actingUser, actorId, type Actor } from '../../auth/actor.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import type { EventPort } from '../../events/port.js';
import { AppError, forbidden, notFound, rateLimited, validation } from '../../errors.js';
import { HOUR_MS, type Clock } from '../../lib/clock.js';
import { rateLimitKey } from '../../lib/address.js';
import type { IssuedSession, SessionView } from '../../auth/session.js';
import type { AuditLog } from '../audit/audit-log.js';
import { isAccountBlocked } from '../principals/blocked.js';

import { assertLocalAccount } from './local-account.js';
import {
  ACCOUNT_LOGIN_RULE,
  ADDRESS_LOGIN_RULE,
  dailyAccountRule,
  FailureThrottle,
} from './login-throttle.js';
import { burnPasswordCheck, hashPassword, verifyPassword } from './passwords.js';
import { announceProfile } from './profile-events.js';
import type { AccountSessions } from './sessions-port.js';
import { normalizeDisplayName } from './profile.js';
import type { AccountView } from './account-view.js';
import {
  createPasswordAccount,
  getAccountView,
  insertNewAccount,
  type NewAccount,
} from './creation.js';
import type { AccountViewCache } from './view-cache.js';
import {
  findAccountById,
  findAccountByUsernameKey,
  setDisplayName,
  setOperator,
  setPasswordHash,
} from './queries.js';
import { checkPassword, lookupKey, PASSWORD_MAX_BYTES, USERNAME_INPUT_MAX } from './username.js';

export type { AccountView } from './account-view.js';

export type { NewAccount } from './creation.js';

/** Accounts: creation, password sign-in and change, the profile, the operator flag. */
export class AccountService {
  /** Failed sign-ins per account (by username key, so unknown names are counted alike). */
  private readonly accountFailures: FailureThrottle;
  /** Failed sign-ins per client address. */
  private readonly addressFailures: FailureThrottle;
  /** Failed sign-ins per account per day, when SVC_RATE_LOGIN_FAILURES_PER_DAY_PER_ACCOUNT is set. */
  private readonly dailyAccountFailures: FailureThrottle | null;

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly sessions: AccountSessions,
    private readonly audit: AuditLog,
    /** The accounts shown as `User`, kept per process (view-cache.ts). */
    readonly views: AccountViewCache,
    private readonly events: EventPort,
  ) {
    this.accountFailures = new FailureThrottle(ACCOUNT_LOGIN_RULE, clock);
    this.addressFailures = new FailureThrottle(ADDRESS_LOGIN_RULE, clock);
    const daily = config.rates.loginFailuresPerDayPerAccount;
    this.dailyAccountFailures =
      daily === null ? null : new FailureThrottle(dailyAccountRule(daily), clock);
  }

  /** Seconds until an account may try its password again (the longer of its two rules). */
  private accountWait(accountKey: string): number {
    return Math.max(
      this.accountFailures.retryAfterSeconds(accountKey),
      this.dailyAccountFailures?.retryAfterSeconds(accountKey) ?? 0,
    );
  }

  private recordAccountFailure(accountKey: string): void {
    this.accountFailures.recordFailure(accountKey);
    this.dailyAccountFailures?.recordFailure(accountKey);
  }

  /**
   * Inserts an account row in the caller's transaction; CONFLICT when the username is taken,
   * EMAIL_TAKEN when the address is. Signups of both kinds and the CLI go through here.
   */
  insertAccount(tx: Tx, input: NewAccount): Promise<string> {
    return insertNewAccount(tx, this.clock, input);
  }

  /** Creates a password account (the CLI's `account create`). */
  createPasswordAccount(input: {
    username: unknown;
    password: unknown;
    email?: unknown;
    displayName?: string | null;
  }): Promise<AccountView> {
    return createPasswordAccount(this.db, this.clock, input);
  }

  get(id: string): Promise<AccountView> {
    return getAccountView(this.db, id);
  }

  /** The actor's own account. */
  me(actor: Actor): Promise<AccountView> {
    return this.get(actingAccountId(actor));
  }

  /**
   * Whether the actor sees an account's private fields (email, pending deletion, probation,
   * operator role): only the person themself, on their own session.
   */
  seesPrivateFields(actor: Actor | null, accountId: string): boolean {
    return actor?.kind === 'user' && actor.accountId === accountId;
  }

  async findByUsername(username: string): Promise<AccountView | null> {
    const row = await findAccountByUsernameKey(this.db.kysely, lookupKey(username));
    return row ? this.get(row.id) : null;
  }

  /** When probation ends for an account, or null when it is over or off. */
  probationEndsAt(createdAt: number): number | null {
    const hours = this.config.limits.probationHours;
    if (hours === null) return null;
    const end = createdAt + hours * HOUR_MS;
    return end > this.clock.now().getTime() ? end : null;
  }

  /**
   * Password sign-in. Unknown user, wrong password and an account without a password give the
   * same answer after the same work. Failures are throttled per account (15 minutes, and per day
   * when SVC_RATE_LOGIN_FAILURES_PER_DAY_PER_ACCOUNT is set) and per address
   * (RATE_LIMITED with retryAfterSeconds, checked before the password so a locked account
   * reveals nothing either).
   */
  async login(input: {
    username: unknown;
    password: unknown;
    ip: string | null;
    userAgent: string | null;
  }): Promise<{ account: AccountView; session: IssuedSession }> {
    const failed = new AppError('UNAUTHENTICATED', 'wrong username or password');
    if (typeof input.username !== 'string' || typeof input.password !== 'string') throw failed;
    if (
      input.username.length > USERNAME_INPUT_MAX ||
      Buffer.byteLength(input.password) > PASSWORD_MAX_BYTES
    ) {
      throw failed;
    }
    const key = lookupKey(input.username);
    const accountKey = `u:${key}`;
    const addressKey = input.ip === null ? null : `a:${rateLimitKey(input.ip)}`;
    const wait = Math.max(
      this.accountWait(accountKey),
      addressKey === null ? 0 : this.addressFailures.retryAfterSeconds(addressKey),
    );
    if (wait > 0) throw rateLimited(wait, 'too many failed sign-in attempts');

    const row = await findAccountByUsernameKey(this.db.kysely, key);
    let ok = false;
    if (!row || row.passwordHash === null) {
      await burnPasswordCheck(input.password);
    } else {
      ok = await verifyPassword(row.passwordHash, input.password);
    }
    if (!row || !ok) {
      this.recordAccountFailure(accountKey);
      if (addressKey !== null) this.addressFailures.recordFailure(addressKey);
      throw failed;
    }
    this.accountFailures.reset(accountKey);
    this.dailyAccountFailures?.reset(accountKey);
    const session = await this.sessions.start(this.db.kysely, {
      accountId: row.id,
      ip: input.ip,
      userAgent: input.userAgent,
    });
    return { account: await this.get(row.id), session };
  }

  /**
   * Changes the caller's password after checking the current one (VALIDATION when wrong, counted
   * like a failed sign-in), and ends every other session of the account.
   */
  async changePassword(
    actor: Actor,
    input: { currentPassword: unknown; newPassword: unknown },
  ): Promise<number> {
    const session = actingUser(actor);
    assertLocalAccount(session);
    const password = checkPassword(input.newPassword);
    const row = await findAccountById(this.db.kysely, session.accountId);
    if (!row || row.deletedAt !== null) throw notFound('account');
    if (row.passwordHash === null) {
      throw validation('this account signs in with a device key and has no password');
    }
    const accountKey = `u:${row.usernameKey}`;
    const wait = this.accountWait(accountKey);
    if (wait > 0) throw rateLimited(wait, 'too many failed password checks');
    const current = typeof input.currentPassword === 'string' ? input.currentPassword : '';
    if (
      Buffer.byteLength(current) > PASSWORD_MAX_BYTES ||
      !(await verifyPassword(row.passwordHash, current))
    ) {
      this.recordAccountFailure(accountKey);
      throw validation('the current password is wrong');
    }
    const passwordHash = await hashPassword(password);
    const ended = await this.db.transaction(async (tx) => {
      await setPasswordHash(tx.db, row.id, passwordHash);
      return this.sessions.end(
        tx,
        { accountId: row.id, exceptSessionId: session.sessionId },
        'password_changed',
      );
    });
    return ended.length;
  }

  /** Sets the caller's display name (null or empty clears it). */
  async updateProfile(actor: Actor, input: { displayName?: unknown }): Promise<AccountView> {
    const session = actingUser(actor);
    assertLocalAccount(session);
    if (input.displayName !== undefined) {
      const displayName = normalizeDisplayName(input.displayName);
      const accountId = session.accountId;
      await this.db.transaction(async (tx) => {
        const before = await findAccountById(tx.db, accountId);
        if (!before || before.displayName === displayName) return;
        await setDisplayName(tx.db, accountId, displayName);
        this.views.changedOnCommit(tx, accountId);
        await announceProfile(tx, this.events, this.clock.now(), accountId, displayName);
      });
    }
    return this.get(session.accountId);
  }

  /**
   * Grants or revokes the instance operator role: the command line only (`svc operator
   * grant|revoke`). A grant is refused (VALIDATION) for an account scheduled for deletion or
   * under a principal block. A change writes an audit row and line; one that changes nothing
   * writes none.
   */
  async setOperatorByUsername(
    actor: Actor,
    username: string,
    grant: boolean,
  ): Promise<AccountView> {
    if (actor.kind !== 'cli') throw forbidden('the operator role is granted on the command line');
    const account = await this.findByUsername(username);
    if (!account) throw notFound(`account "${username}"`);
    if (grant && account.deletionScheduledFor !== null) {
      throw validation('an account scheduled for deletion cannot be made an operator');
    }
    await this.db.transaction(async (tx) => {
      if (grant && (await isAccountBlocked(tx.db, account.id))) {
        throw validation('a blocked account cannot be made an operator; unblock it first');
      }
      if (account.isOperator === grant) return;
      await setOperator(tx.db, account.id, grant);
      this.views.changedOnCommit(tx, account.id);
      await this.audit.record(tx, {
        action: grant ? 'operator.grant' : 'operator.revoke',
        actorId: actorId(actor),
        target: `user:${account.id}`,
      });
    });
    return this.get(account.id);
  }

  /**
   * Any account's live sessions, newest first: the operator CLI's `svc session list <username>`
   * (the CLI only; FORBIDDEN for anyone else).
   */
  async sessionsOf(
    actor: Actor,
    username: string,
  ): Promise<{ account: AccountView; sessions: SessionView[] }> {
    const account = await this.operatorTarget(actor, username);
    return { account, sessions: await this.sessions.listOf(account.id) };
  }

  /**
   * Ends every live session of an account, or the one named, from the operator CLI
   * (`svc session end <username> [--session <id>]`): reason `ended_by_operator`, open
   * WebSockets close with 4401, one audit row and line. NOT_FOUND for a session id that is not a
   * live session of that account. Answers how many ended.
   */
  async endSessionsOf(actor: Actor, username: string, sessionId?: string): Promise<number> {
    const account = await this.operatorTarget(actor, username);
    const ended = await this.db.transaction(async (tx) => {
      const ids = await this.sessions.end(
        tx,
        sessionId === undefined ? { accountId: account.id } : { accountId: account.id, sessionId },
        'ended_by_operator',
      );
      if (sessionId !== undefined && ids.length === 0) throw notFound(`session "${sessionId}"`);
      if (ids.length > 0) {
        await this.audit.record(tx, {
          action: 'sessions.end',
          actorId: actorId(actor),
          target: `user:${account.id}`,
          details: { sessionIds: ids },
        });
      }
      return ids;
    });
    return ended.length;
  }

  private async operatorTarget(actor: Actor, username: string): Promise<AccountView> {
    if (actor.kind !== 'cli')
      throw forbidden("another account's sessions are seen on the command line");
    const account = await this.findByUsername(username);
    if (!account) throw notFound(`account "${username}"`);
    return account;
  }
}
