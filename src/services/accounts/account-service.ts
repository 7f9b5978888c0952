import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import { transaction } from '../../db/transaction.js';
import { AppError, conflict, notFound, validation } from '../../errors.js';
import { HOUR_MS, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { IssuedSession, SessionService } from '../sessions/session-service.js';

import { burnPasswordCheck, hashPassword, verifyPassword } from './passwords.js';
import {
  findAccountByEmailKey,
  findAccountById,
  findAccountByUsernameKey,
  insertAccount,
  setOperator,
} from './queries.js';
import { checkPassword, normalizeEmail, normalizeUsername } from './username.js';

export interface AccountView {
  id: string;
  username: string;
  displayName: string | null;
  email: string | null;
  createdAt: number;
  isOperator: boolean;
  deletionScheduledFor: number | null;
  homeServer: string | null;
}

/** Accounts: creation, password sign-in, the operator flag. */
export class AccountService {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
  ) {}

  /** Creates a password account (the CLI's `account create`, and signups). */
  async createPasswordAccount(input: {
    username: unknown;
    password: unknown;
    email?: unknown;
    displayName?: string | null;
  }): Promise<AccountView> {
    const { username, key } = normalizeUsername(input.username);
    const password = checkPassword(input.password);
    const email = normalizeEmail(input.email);
    const passwordHash = await hashPassword(password);
    const id = newId();
    const now = this.clock.now().getTime();
    await transaction(this.db.kysely, async (tx) => {
      if (await findAccountByUsernameKey(tx.db, key))
        throw conflict(`the username "${username}" is taken`);
      if (email && (await findAccountByEmailKey(tx.db, email.key))) {
        throw new AppError('EMAIL_TAKEN', 'another account already uses this email address');
      }
      await insertAccount(tx.db, {
        id,
        username,
        usernameKey: key,
        displayName: input.displayName ?? null,
        email: email?.email ?? null,
        emailKey: email?.key ?? null,
        passwordHash,
        keyIdentityId: null,
        homeServer: null,
        isOperator: 0,
        avatarPath: null,
        acceptedTermsUrl: null,
        acceptedTermsAt: null,
        createdAt: now,
        deletionRequestedAt: null,
        deletionScheduledFor: null,
        deletedAt: null,
      });
    });
    return this.get(id);
  }

  async get(id: string): Promise<AccountView> {
    const row = await findAccountById(this.db.kysely, id);
    if (!row || row.deletedAt !== null) throw notFound('account');
    return {
      id: row.id,
      username: row.username,
      displayName: row.displayName,
      email: row.email,
      createdAt: row.createdAt,
      isOperator: row.isOperator === 1,
      deletionScheduledFor: row.deletionScheduledFor,
      homeServer: row.homeServer,
    };
  }

  async findByUsername(username: string): Promise<AccountView | null> {
    const key = username.normalize('NFKC').trim().toLowerCase();
    const row = await findAccountByUsernameKey(this.db.kysely, key);
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
   * Password sign-in. Unknown user and wrong password give the same answer after the same work.
   */
  async login(input: {
    username: unknown;
    password: unknown;
    ip: string | null;
    userAgent: string | null;
  }): Promise<{ account: AccountView; session: IssuedSession }> {
    const failed = new AppError('UNAUTHENTICATED', 'wrong username or password');
    if (typeof input.username !== 'string' || typeof input.password !== 'string') throw failed;
    if (input.username.length > 256 || Buffer.byteLength(input.password) > 1024) throw failed;
    const key = input.username.normalize('NFKC').trim().toLowerCase();
    const row = await findAccountByUsernameKey(this.db.kysely, key);
    if (!row || row.passwordHash === null) {
      await burnPasswordCheck(input.password);
      throw failed;
    }
    if (!(await verifyPassword(row.passwordHash, input.password))) throw failed;
    const session = await this.sessions.start(this.db.kysely, {
      accountId: row.id,
      ip: input.ip,
      userAgent: input.userAgent,
    });
    return { account: await this.get(row.id), session };
  }

  async setOperatorByUsername(username: string, grant: boolean): Promise<AccountView> {
    const account = await this.findByUsername(username);
    if (!account) throw notFound(`account "${username}"`);
    if (grant && account.deletionScheduledFor !== null) {
      throw validation('an account scheduled for deletion cannot be made an operator');
    }
    await setOperator(this.db.kysely, account.id, grant);
    return this.get(account.id);
  }
}
