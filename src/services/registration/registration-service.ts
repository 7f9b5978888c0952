import type { Logger } from 'pino';

import { actorId, assertInstanceOperator, type Actor } from '../../auth/actor.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { InstanceInviteTable } from '../../db/tables/registration.js';
import { AppError, capExceeded, notFound, validation } from '../../errors.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';
import { isId, newId, randomToken } from '../../lib/ids.js';
import type { Mailer } from '../../mail/mailer.js';
import type { AuditLog } from '../audit/index.js';
import {
  hashPassword,
  normalizeDisplayName,
  checkPassword,
  normalizeEmail,
  normalizeUsername,
  type AccountService,
  type AccountView,
} from '../accounts/index.js';
import type { IssuedSession, SessionService } from '../sessions/index.js';

import {
  deleteExpiredPowUses,
  emailKeyInUse,
  findInstanceInviteById,
  insertInstanceInvite,
  listInstanceInvites,
  revokeInstanceInvite,
} from './queries.js';
import { hashInviteToken, type SignupPolicy, type SignupRequest } from './signup-policy.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

/** An instance invite as operators see it: the row without its token hash and address key. */
export type InstanceInviteView = Omit<InstanceInviteTable, 'tokenHash' | 'emailKey'>;

export const INVITE_DEFAULT_DAYS = 7;
export const INVITE_MAX_DAYS = 365;
export const INVITE_DEFAULT_USES = 1;
export const INVITE_MAX_USES = 1000;

const view = (row: InstanceInviteTable): InstanceInviteView => ({
  id: row.id,
  email: row.email,
  createdBy: row.createdBy,
  createdAt: row.createdAt,
  expiresAt: row.expiresAt,
  maxUses: row.maxUses,
  uses: row.uses,
  revokedAt: row.revokedAt,
});

/** Password signups (`signupWithInvite`) and instance invites. */
export class RegistrationService {
  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly accounts: AccountService,
    private readonly sessions: SessionService,
    private readonly signup: SignupPolicy,
    private readonly mailer: Mailer,
    private readonly log: Logger,
    private readonly audit: AuditLog,
  ) {}

  /** Creates a password account and signs it in, under every rule of SignupPolicy. */
  async signupWithPassword(
    input: SignupRequest & {
      username: unknown;
      password: unknown;
      displayName?: unknown;
      ip: string | null;
      userAgent: string | null;
    },
  ): Promise<{ account: AccountView; session: IssuedSession; serverId: string | null }> {
    this.signup.assertPasswordSignupAllowed();
    const { username, key } = normalizeUsername(input.username);
    const password = checkPassword(input.password);
    const displayName = normalizeDisplayName(input.displayName);
    const request: SignupRequest = {
      inviteToken: input.inviteToken ?? null,
      pow: input.pow ?? null,
      acceptedTermsUrl: input.acceptedTermsUrl ?? null,
      email: input.email ?? null,
    };
    this.signup.precheck(request);
    const passwordHash = await hashPassword(password);
    const result = await this.db.transaction(async (tx) => {
      const admission = await this.signup.admit(tx, request);
      const accountId = await this.accounts.insertAccount(tx, {
        username,
        usernameKey: key,
        passwordHash,
        displayName,
      });
      const { serverId } = await this.signup.completeSignup(tx, accountId, admission);
      const session = await this.sessions.start(tx.db, {
        accountId,
        ip: input.ip,
        userAgent: input.userAgent,
      });
      return { accountId, session, serverId };
    });
    return {
      account: await this.accounts.get(result.accountId),
      session: result.session,
      serverId: result.serverId,
    };
  }

  /** Drops the record of spent proof-of-work challenges once they expired; the hourly job. */
  async pruneExpired(): Promise<number> {
    return deleteExpiredPowUses(this.db.kysely, this.clock.now().getTime());
  }

  /** Instance operators and the command line manage instance invites; answers the audit id. */
  private assertManager(actor: Actor): string {
    assertInstanceOperator(actor, 'only an instance operator may manage instance invites');
    return actorId(actor);
  }

  /**
   * Creates an instance invite; the token is answered once and never stored. Defaults: 7 days,
   * one use. An invite bound to an address is mailed there (unless `email` is disabled).
   */
  async createInstanceInvite(
    actor: Actor,
    input: { email?: unknown; expiresInDays?: unknown; maxUses?: unknown },
  ): Promise<{ invite: InstanceInviteView; token: string }> {
    const createdBy = this.assertManager(actor);
    const email = normalizeEmail(input.email);
    const days = input.expiresInDays ?? INVITE_DEFAULT_DAYS;
    if (!Number.isInteger(days) || (days as number) < 1 || (days as number) > INVITE_MAX_DAYS) {
      throw validation(`expiresInDays must be a whole number from 1 to ${INVITE_MAX_DAYS}`);
    }
    const maxUses = input.maxUses ?? INVITE_DEFAULT_USES;
    if (
      !Number.isInteger(maxUses) ||
      (maxUses as number) < 1 ||
      (maxUses as number) > INVITE_MAX_USES
    ) {
      throw validation(`maxUses must be a whole number from 1 to ${INVITE_MAX_USES}`);
    }
    const cap = this.config.limits.inviteMaxUses;
    if (cap !== null && (maxUses as number) > cap) {
      throw capExceeded('uses per invite', 'SVC_LIMIT_INVITE_MAX_USES', cap);
    }
    if (email && (await emailKeyInUse(this.db.kysely, email.key))) {
      throw new AppError('EMAIL_TAKEN', 'an account already uses this email address');
    }
    const token = randomToken(32);
    const now = this.clock.now().getTime();
    const row: InstanceInviteTable = {
      id: newId(),
      tokenHash: hashInviteToken(token),
      email: email?.email ?? null,
      emailKey: email?.key ?? null,
      createdBy,
      createdAt: now,
      expiresAt: now + (days as number) * DAY_MS,
      maxUses: maxUses as number,
      uses: 0,
      revokedAt: null,
    };
    await this.db.transaction(async (tx) => {
      await insertInstanceInvite(tx.db, row);
      await this.audit.record(tx, {
        action: 'instance_invite.create',
        actorId: createdBy,
        target: `instance_invite:${row.id}`,
        details: { email: row.email, maxUses: row.maxUses, expiresAt: row.expiresAt },
      });
    });
    if (row.email && !this.config.disabledFeatures.includes('email')) {
      void this.mailer
        .send({
          to: row.email,
          subject: 'You are invited to create an account',
          text:
            `You are invited to create an account on ${this.serverName()}.\n\n` +
            `Invite token: ${token}\n\n` +
            `It works until ${new Date(row.expiresAt!).toISOString()}.\n`,
        })
        .catch((err: unknown) =>
          this.log.error({ err, inviteId: row.id }, 'instance invite mail failed'),
        );
    }
    return { invite: view(row), token };
  }

  private serverName(): string {
    const base = this.config.server.publicBaseUrl;
    return base ? new URL(base).host : 'this server';
  }

  /** Instance invites, newest first: a page of them, or every one without `args` (the CLI). */
  async listInstanceInvites(actor: Actor, args?: KeysetArgs): Promise<InstanceInviteView[]> {
    this.assertManager(actor);
    if (!args) return (await listInstanceInvites(this.db.kysely)).map(view);
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    return keysetRows(await listInstanceInvites(this.db.kysely, page), page).map(view);
  }

  /** Revokes an invite; NOT_FOUND when there is none, false when it was revoked already. */
  async revokeInstanceInvite(actor: Actor, id: string): Promise<boolean> {
    const by = this.assertManager(actor);
    // Not an id we issue (and maybe text PostgreSQL refuses, such as a NUL): no such invite.
    if (!isId(id)) throw notFound('invite');
    const invite = await findInstanceInviteById(this.db.kysely, id);
    if (!invite) throw notFound('invite');
    return this.db.transaction(async (tx) => {
      const revoked = await revokeInstanceInvite(tx.db, id, this.clock.now().getTime());
      if (revoked) {
        await this.audit.record(tx, {
          action: 'instance_invite.revoke',
          actorId: by,
          target: `instance_invite:${id}`,
        });
      }
      return revoked;
    });
  }
}
