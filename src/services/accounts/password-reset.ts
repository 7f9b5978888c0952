import { createHash } from 'node:crypto';

import type { Logger } from 'pino';

import type { Config } from '../../config/index.js';
import type { Db, Executor } from '../../db/database.js';
import { AppError, featureDisabled, validation } from '../../errors.js';
import { DAY_MS, HOUR_MS, type Clock } from '../../lib/clock.js';
import { newId, randomToken } from '../../lib/ids.js';
import type { Mailer } from '../../mail/mailer.js';

import type { AccountSessions } from './sessions-port.js';
import { hashPassword } from './passwords.js';
import {
  findAccountById,
  findAccountByUsernameKey,
  findLiveAccountByEmailKey,
  setPasswordHash,
} from './queries.js';
import { checkPassword, lookupKey, USERNAME_INPUT_MAX } from './username.js';

/** How long a reset token works. */
export const RESET_TOKEN_TTL_MS = HOUR_MS;
/** Reset mails one account gets per hour at most; more requests answer alike and send nothing. */
export const RESET_MAILS_PER_HOUR = 3;

const hashToken = (token: string) => createHash('sha256').update(token).digest('base64url');

/** How long a claim token of an imported account works (`svc import --claim-tokens`). */
export const CLAIM_TOKEN_TTL_MS = 14 * DAY_MS;

/**
 * Reset tokens for accounts an import made, which their people claim by setting a password with
 * one (the reset page, `resetPassword`), as with a mailed token but handed over by the operator
 * (docs/operations.md, "Importing"). Only accounts still unclaimed get one: a password set since
 * is never replaced this way. Answers the tokens by account id.
 */
export async function issueClaimTokens(
  db: Executor,
  accountIds: readonly string[],
  unclaimedHash: string,
  now: number,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < accountIds.length; i += 500) {
    const unclaimed = await db
      .selectFrom('account')
      .select('id')
      .where('id', 'in', accountIds.slice(i, i + 500))
      .where('passwordHash', '=', unclaimedHash)
      .where('deletedAt', 'is', null)
      .execute();
    for (const { id } of unclaimed) {
      const token = randomToken(32);
      await db
        .insertInto('password_reset')
        .values({
          id: newId(),
          tokenHash: hashToken(token),
          accountId: id,
          createdAt: now,
          expiresAt: now + CLAIM_TOKEN_TTL_MS,
          usedAt: null,
        })
        .execute();
      out.set(id, token);
    }
  }
  return out;
}

const invalidToken = () =>
  new AppError('INVALID_TOKEN', 'the reset token is unknown or was used already');

/**
 * Password reset by mail (the `email` feature). The request answers the same whether or not the
 * account exists; the mail goes out after the answer, so timing tells nothing either.
 */
export class PasswordResetService {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly sessions: AccountSessions,
    private readonly mailer: Mailer,
    private readonly log: Logger,
  ) {}

  private assertEnabled(): void {
    // Only the operator's switch refuses: while `email` is merely unavailable (no SMTP) the
    // mail is logged instead, so a development setup can still reset (contract, features 5).
    if (this.config.disabledFeatures.includes('email')) throw featureDisabled('email');
  }

  /** Mails a reset token to the account named by its email address or username, if any. */
  async request(input: { emailOrUsername: unknown }): Promise<void> {
    this.assertEnabled();
    const given = input.emailOrUsername;
    if (typeof given !== 'string' || given.trim() === '' || given.length > USERNAME_INPUT_MAX) {
      throw validation('emailOrUsername must be an email address or a username');
    }
    const account = given.includes('@')
      ? await findLiveAccountByEmailKey(this.db.kysely, given.trim().toLowerCase())
      : await findAccountByUsernameKey(this.db.kysely, lookupKey(given));
    // No mail for an account without an address, one that signs in with a key only (a reset
    // would give it back the password sign-in it gave up), or a person from another server.
    if (!account || !account.email || account.passwordHash === null || account.homeServer) {
      return;
    }
    const now = this.clock.now().getTime();
    const token = randomToken(32);
    const sent = await this.db.transaction(async (tx) => {
      const recent = await tx.db
        .selectFrom('password_reset')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('accountId', '=', account.id)
        .where('createdAt', '>', now - HOUR_MS)
        .executeTakeFirstOrThrow();
      if (Number(recent.n) >= RESET_MAILS_PER_HOUR) return false;
      await tx.db
        .insertInto('password_reset')
        .values({
          id: newId(),
          tokenHash: hashToken(token),
          accountId: account.id,
          createdAt: now,
          expiresAt: now + RESET_TOKEN_TTL_MS,
          usedAt: null,
        })
        .execute();
      return true;
    });
    if (!sent) {
      this.log.info({ accountId: account.id }, 'password reset mail skipped: hourly limit');
      return;
    }
    const to = account.email;
    // Not awaited: the answer must not wait for (or reveal) the SMTP round trip.
    void this.mailer.send(this.message(to, account.username, token)).catch((err: unknown) => {
      this.log.error({ err, accountId: account.id }, 'password reset mail failed');
    });
  }

  private message(to: string, username: string, token: string) {
    const base = this.config.server.publicBaseUrl;
    const link = base
      ? `\nOr open ${new URL(`/reset-password?token=${encodeURIComponent(token)}`, base)}\n`
      : '';
    return {
      to,
      subject: 'Reset your password',
      // The one secret the development log shows (contract: features, rule 5).
      logFields: { resetToken: token },
      text:
        `Someone asked to reset the password of the account "${username}".\n\n` +
        `Reset token: ${token}\n${link}\n` +
        `The token works once, for one hour. If you did not ask for this, ignore this mail; ` +
        `your password stays as it is.\n`,
    };
  }

  /**
   * Sets a new password with a mailed token: INVALID_TOKEN when unknown or used, EXPIRED_TOKEN
   * after an hour. Spends every open token of the account and ends every session.
   */
  async reset(input: { token: unknown; newPassword: unknown }): Promise<void> {
    this.assertEnabled();
    const password = checkPassword(input.newPassword);
    if (typeof input.token !== 'string' || input.token.length === 0 || input.token.length > 200) {
      throw invalidToken();
    }
    const tokenHash = hashToken(input.token);
    // Check first, so a made-up token costs no password hash; then check again while spending.
    await this.usableReset(tokenHash);
    const passwordHash = await hashPassword(password);
    await this.db.transaction(async (tx) => {
      const reset = await this.usableReset(tokenHash, tx.db);
      const now = this.clock.now().getTime();
      // Spend this token only if still unspent (a racing reset with it gets INVALID_TOKEN),
      // then every other open token of the account.
      const spent = await tx.db
        .updateTable('password_reset')
        .set({ usedAt: now })
        .where('id', '=', reset.id)
        .where('usedAt', 'is', null)
        .executeTakeFirst();
      if (Number(spent.numUpdatedRows) === 0) throw invalidToken();
      await tx.db
        .updateTable('password_reset')
        .set({ usedAt: now })
        .where('accountId', '=', reset.accountId)
        .where('usedAt', 'is', null)
        .execute();
      await setPasswordHash(tx.db, reset.accountId, passwordHash);
      await this.sessions.end(tx, { accountId: reset.accountId }, 'password_reset');
    });
  }

  /** Drops reset tokens a day past their expiry (used ones too); the hourly job calls it. */
  async pruneExpired(): Promise<number> {
    const result = await this.db.kysely
      .deleteFrom('password_reset')
      .where('expiresAt', '<', this.clock.now().getTime() - DAY_MS)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private async usableReset(tokenHash: string, executor = this.db.kysely) {
    const reset = await executor
      .selectFrom('password_reset')
      .selectAll()
      .where('tokenHash', '=', tokenHash)
      .executeTakeFirst();
    if (!reset || reset.usedAt !== null) throw invalidToken();
    if (reset.expiresAt <= this.clock.now().getTime()) {
      throw new AppError('EXPIRED_TOKEN', 'the reset token has expired; ask for a new one');
    }
    const account = await findAccountById(executor, reset.accountId);
    if (!account || account.deletedAt !== null || account.passwordHash === null) {
      throw invalidToken();
    }
    return reset;
  }
}
