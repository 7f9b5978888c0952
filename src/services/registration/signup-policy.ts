import { createHash } from 'node:crypto';

import type { Config } from '../../config/index.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, forbidden, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isUniqueViolation } from '../../db/errors.js';
import { normalizeEmail, recordTermsAcceptance, setAccountEmail } from '../accounts/index.js';

import { issuePowChallenge, verifyPow, type PowChallenge } from './pow.js';
import {
  emailKeyInUse,
  findInstanceInviteByTokenHash,
  recordPowUse,
  spendInstanceInvite,
} from './queries.js';

/** What a signup brings besides the account's own fields (username, password or device key). */
export interface SignupRequest {
  /** An instance invite token (or a workspace invite token, see completeSignup). */
  inviteToken?: string | null;
  /** The solved registration challenge; required while SVC_REGISTRATION_POW_BITS > 0. */
  pow?: { challengeId: string; nonce: string } | null;
  /** Must equal serverInfo.termsUrl when the server has terms; ignored otherwise. */
  acceptedTermsUrl?: string | null;
  /** The address the signup asks for (password signups); an email-bound invite decides instead. */
  email?: string | null;
}

/** The outcome of `admit`, handed to `completeSignup` once the account row exists. */
export interface Admission {
  /** The instance invite spent, or null (open registration, or a workspace invite). */
  instanceInviteId: string | null;
  /** A token that is no instance invite: redeemed as a workspace invite in completeSignup. */
  workspaceInviteToken: string | null;
  /** The address the account gets, already checked to be free. */
  email: { email: string; key: string } | null;
  /** The terms URL to record, or null when the server has none. */
  acceptedTermsUrl: string | null;
  at: number;
}

/**
 * The parts of the workspaces area a signup uses (membership and workspace invites), composed
 * by the root from the workspace and invite services.
 */
export interface WorkspaceSignupPort {
  /** Member of the workspace and its public channels; events after the transaction commits. */
  joinAsMember(tx: Tx, workspaceId: string, accountId: string): Promise<unknown>;
  /**
   * Joins the new account through a workspace invite token; null when the token is not a
   * workspace invite. Throws the invite's own refusals (INVALID_TOKEN, EXPIRED_TOKEN, caps).
   */
  redeemInviteForSignup(
    tx: Tx,
    token: string,
    accountId: string,
  ): Promise<{ workspaceId: string } | null>;
}

export const hashInviteToken = (token: string): string =>
  createHash('sha256').update(token).digest('base64url');

const invalidInvite = () =>
  new AppError('INVALID_TOKEN', 'the invite is unknown, used up or revoked');

/**
 * The rules every signup shares, password (`signupWithInvite`) and device key
 * (`signupWithKey`) alike (docs/accounts.md, "Registration"). A signup calls, in order:
 *
 * 1. `assertPasswordSignupAllowed()` (password signups only) and `precheck(req)` before any
 *    expensive work (hashing, signature checks);
 * 2. `admit(tx, req)` in the signup's transaction, before inserting the account: spends the
 *    proof of work and the instance invite and settles the account's email;
 * 3. `completeSignup(tx, accountId, admission)` in the same transaction, after inserting it:
 *    records the email and the terms acceptance, redeems a workspace invite, joins the default
 *    workspace. Its `serverId` is the SessionPayload's.
 *
 * A failure anywhere rolls the transaction back, so an invite use or a challenge is spent only
 * by a signup that succeeded.
 */
export class SignupPolicy {
  constructor(
    private readonly config: Config,
    private readonly clock: Clock,
    /** The server's cookie secret, which also signs proof-of-work challenges. */
    private readonly secret: Buffer,
    private readonly workspaces: WorkspaceSignupPort,
  ) {}

  /** FORBIDDEN while new accounts must sign up with a device key (SVC_SIGNUP_REQUIRE_KEYS). */
  assertPasswordSignupAllowed(): void {
    if (this.config.registration.signupRequiresKeys) {
      throw forbidden('this server takes new accounts only with a device key (signupWithKey)');
    }
  }

  /** A new proof-of-work challenge, or null when the server asks for none. */
  challenge(): PowChallenge | null {
    const bits = this.config.registration.powBits;
    if (bits === 0) return null;
    return issuePowChallenge(this.secret, bits, this.clock.now().getTime());
  }

  /**
   * The terms URL to record: VALIDATION unless `acceptedTermsUrl` is exactly serverInfo.termsUrl
   * when the server has terms; null (and the argument ignored) when it has none.
   */
  checkTerms(acceptedTermsUrl: unknown): string | null {
    const terms = this.config.instance.termsUrl;
    if (terms === null) return null;
    if (acceptedTermsUrl === undefined || acceptedTermsUrl === null || acceptedTermsUrl === '') {
      throw validation(`accept the terms at ${terms} by passing it as acceptedTermsUrl`);
    }
    if (acceptedTermsUrl !== terms) {
      throw validation(
        `acceptedTermsUrl must be the terms URL of this server, ${terms}, unchanged`,
      );
    }
    return terms;
  }

  /**
   * The checks that need no database: terms, an invite when registration is closed, the proof of
   * work's shape and hash. Cheap; run it before hashing a password or checking a signature.
   */
  precheck(req: SignupRequest): void {
    this.checkTerms(req.acceptedTermsUrl);
    this.checkOpen(req);
    if (req.email !== undefined && req.email !== null) normalizeEmail(req.email);
  }

  /**
   * VALIDATION when registration is closed and no invite is given, or when a proof of work is
   * due and missing or wrong; INVALID_TOKEN for a token that cannot be one.
   */
  checkOpen(req: Pick<SignupRequest, 'inviteToken' | 'pow'>): void {
    const token = req.inviteToken ?? null;
    if (token !== null && (typeof token !== 'string' || token.length === 0 || token.length > 200)) {
      throw invalidInvite();
    }
    if (!this.config.registration.open && token === null) {
      throw validation('this server takes new accounts only with an invite: pass inviteToken');
    }
    this.verifyPow(req.pow);
  }

  private verifyPow(pow: SignupRequest['pow']) {
    const bits = this.config.registration.powBits;
    if (bits === 0) return null;
    if (!pow) {
      throw validation(
        `this server asks for a proof of work: solve registrationChallenge (${bits} bits) and pass it as pow`,
      );
    }
    return verifyPow(this.secret, pow, bits, this.clock.now().getTime());
  }

  /**
   * Spends an instance invite for `email` (the address the signup asks for, or null). Answers
   * the address the account gets: the invite's when it is bound to one (a different requested
   * address is VALIDATION), else the requested one. EMAIL_TAKEN when another account has it,
   * INVALID_TOKEN for an unknown, used-up or revoked invite, EXPIRED_TOKEN for an expired one.
   * Null when the token is no instance invite (it may be a workspace invite).
   */
  async consumeInstanceInvite(
    tx: Tx,
    token: string,
    email: string | null,
  ): Promise<{ inviteId: string; email: { email: string; key: string } | null } | null> {
    const invite = await findInstanceInviteByTokenHash(tx.db, hashInviteToken(token));
    if (!invite) return null;
    if (invite.revokedAt !== null || invite.uses >= invite.maxUses) throw invalidInvite();
    if (invite.expiresAt !== null && invite.expiresAt <= this.clock.now().getTime()) {
      throw new AppError('EXPIRED_TOKEN', 'the invite has expired');
    }
    const requested = normalizeEmail(email);
    let address = requested;
    if (invite.email !== null && invite.emailKey !== null) {
      if (requested && requested.key !== invite.emailKey) {
        throw validation('this invite is for another email address');
      }
      address = { email: invite.email, key: invite.emailKey };
    }
    if (address && (await emailKeyInUse(tx.db, address.key))) throw emailTaken();
    if (!(await spendInstanceInvite(tx.db, invite.id))) throw invalidInvite();
    return { inviteId: invite.id, email: address };
  }

  /** Every check and spend before the account row is inserted; see the class comment. */
  async admit(tx: Tx, req: SignupRequest): Promise<Admission> {
    const acceptedTermsUrl = this.checkTerms(req.acceptedTermsUrl);
    this.checkOpen(req);
    const now = this.clock.now().getTime();
    const pow = this.verifyPow(req.pow);
    if (pow && !(await recordPowUse(tx.db, { ...pow, usedAt: now }))) {
      throw validation('this proof-of-work challenge was used already; ask for a new one');
    }
    const token = req.inviteToken ?? null;
    let instanceInviteId: string | null = null;
    let workspaceInviteToken: string | null = null;
    let email = normalizeEmail(req.email);
    if (token !== null) {
      const spent = await this.consumeInstanceInvite(tx, token, req.email ?? null);
      if (spent) {
        instanceInviteId = spent.inviteId;
        email = spent.email;
      } else {
        workspaceInviteToken = token;
      }
    }
    if (email && instanceInviteId === null && (await emailKeyInUse(tx.db, email.key))) {
      throw emailTaken();
    }
    return { instanceInviteId, workspaceInviteToken, email, acceptedTermsUrl, at: now };
  }

  /**
   * Finishes a signup once the account row exists: its email, the terms acceptance with its
   * time, a workspace invite, and membership of the default workspace with its public channels
   * (all before the signup answers). `serverId` names the workspace of a workspace invite.
   */
  async completeSignup(
    tx: Tx,
    accountId: string,
    admission: Admission,
  ): Promise<{ serverId: string | null }> {
    if (admission.email) {
      try {
        await setAccountEmail(tx.db, accountId, admission.email);
      } catch (err) {
        if (isUniqueViolation(err)) throw emailTaken();
        throw err;
      }
    }
    if (admission.acceptedTermsUrl !== null) {
      await recordTermsAcceptance(tx.db, accountId, admission.acceptedTermsUrl, admission.at);
    }
    let serverId: string | null = null;
    if (admission.workspaceInviteToken !== null) {
      const redeemed = await this.workspaces.redeemInviteForSignup(
        tx,
        admission.workspaceInviteToken,
        accountId,
      );
      if (!redeemed) throw invalidInvite();
      serverId = redeemed.workspaceId;
    }
    await this.joinDefaultWorkspace(tx, accountId);
    return { serverId };
  }

  /** Makes the account a Member of SVC_DEFAULT_WORKSPACE and of its public channels. */
  async joinDefaultWorkspace(tx: Tx, accountId: string): Promise<void> {
    const workspaceId = this.config.instance.defaultWorkspace;
    if (workspaceId === null) return;
    await this.workspaces.joinAsMember(tx, workspaceId, accountId);
  }
}

const emailTaken = () =>
  new AppError('EMAIL_TAKEN', 'another account already uses this email address');
