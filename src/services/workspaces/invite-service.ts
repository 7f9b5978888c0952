import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import { createHash } from 'node:crypto';

import type { Logger } from 'pino';

import { actingAccountId, type Actor } from '../../auth/actor.js';
import { assertCan, can } from '../../auth/policy.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import type { WorkspaceInviteTable } from '../../db/tables/workspaces.js';
import { AppError, capExceeded, notFound, validation } from '../../errors.js';
import { DAY_MS, HOUR_MS, type Clock } from '../../lib/clock.js';
import { isId, newId, randomToken } from '../../lib/ids.js';
import type { Mailer } from '../../mail/mailer.js';
import { normalizeEmail, lockAccount } from '../accounts/index.js';
import { assertWritable, type Authz } from '../authz/index.js';
import {
  findChannelsIn,
  findConversationMember,
  canRead,
  readFactsFrom,
} from '../conversations/index.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

import {
  consumeInviteUse,
  countInvitesCreatedSince,
  findInvite,
  findInviteByTokenHash,
  findMember,
  findWorkspace,
  insertInvite,
  listUsableInvites,
  revokeInvite,
} from './queries.js';
import type { WorkspaceService, WorkspaceView } from './workspace-service.js';

/**
 * An invite as its creator and the workspace's staff see it (never its token): the columns it
 * shows as they are stored, and its workspace, creator, guest channels and state named as the
 * API names them.
 */
export interface InviteView extends Pick<
  WorkspaceInviteTable,
  'id' | 'role' | 'createdAt' | 'expiresAt' | 'maxUses' | 'uses' | 'revokedAt' | 'email'
> {
  serverId: string;
  createdById: string;
  channelIds: string[];
  state: 'active' | 'expired' | 'revoked' | 'usedUp';
}

export interface CreatedInvite {
  invite: InviteView;
  /** The secret, shown once: only its hash is stored. */
  token: string;
  link: string;
  /** Whether the invite was handed to the mailer (an email was given and `email` is not disabled). */
  mailed: boolean;
}

export interface CreateInviteInput {
  serverId: string;
  /** `member` (the default) or `guest`; another role is refused (VALIDATION). */
  role?: string | null;
  expiresInHours?: number | null;
  maxUses?: number | null;
  email?: string | null;
  channelIds?: readonly string[] | null;
}

/** Default lifetime of an invite: 7 days, as Discord's default. */
export const INVITE_DEFAULT_HOURS = 7 * 24;
/** The longest lifetime: 30 days. */
export const INVITE_MAX_HOURS = 30 * 24;
const GUEST_CHANNELS_MAX = 50;
const TOKEN_MAX = 200;

export const hashInviteToken = (token: string): string =>
  createHash('sha256').update(token).digest('base64url');

const invalidToken = () =>
  new AppError('INVALID_TOKEN', 'this invite is unknown, used up or revoked');

export interface InviteServiceDeps {
  db: Db;
  config: Config;
  clock: Clock;
  log: Logger;
  mailer: Mailer | null;
  featureState(name: 'email'): 'enabled' | 'disabled' | 'unavailable';
  workspaces: WorkspaceService;
  authz: Authz;
}

/**
 * Workspace invites: creation (with caps, guest channels and mail), listing, revocation and
 * joining with a token, on its own or during a signup.
 */
export class InviteService {
  constructor(private readonly deps: InviteServiceDeps) {}

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /**
   * Creates an invite and returns its link to the creator (the token is shown only here). Mails
   * it when an email is given, unless the `email` feature is disabled.
   */
  async create(actor: Actor, input: CreateInviteInput): Promise<CreatedInvite> {
    const accountId = actingAccountId(actor);
    const { config, workspaces } = this.deps;
    const serverId = input.serverId;
    const role = input.role ?? 'member';
    if (role !== 'member' && role !== 'guest') {
      throw validation('an invite gives the MEMBER or GUEST role');
    }
    const email = normalizeEmail(input.email ?? null)?.email ?? null;
    const hours = input.expiresInHours ?? INVITE_DEFAULT_HOURS;
    if (!Number.isInteger(hours) || hours < 1 || hours > INVITE_MAX_HOURS) {
      throw validation(`expiresInHours must be a whole number from 1 to ${INVITE_MAX_HOURS}`);
    }
    const usesCap = config.limits.inviteMaxUses;
    let maxUses = input.maxUses ?? (email ? 1 : usesCap);
    if (maxUses !== null) {
      if (!Number.isInteger(maxUses) || maxUses < 1) {
        throw validation('maxUses must be a whole number of at least 1');
      }
      if (usesCap !== null && maxUses > usesCap) {
        throw capExceeded('uses per invite', 'SVC_LIMIT_INVITE_MAX_USES', usesCap);
      }
    } else {
      maxUses = null;
    }
    const channelIds = [...new Set(input.channelIds ?? [])];
    const token = randomToken(32);
    const now = this.now();
    const row: WorkspaceInviteTable = {
      id: newId(),
      workspaceId: serverId,
      tokenHash: hashInviteToken(token),
      createdBy: accountId,
      createdAt: now,
      expiresAt: now + hours * HOUR_MS,
      maxUses,
      uses: 0,
      revokedAt: null,
      email,
      role,
      guestChannelIds: role === 'guest' ? JSON.stringify(channelIds) : null,
    };
    const link = `${config.server.publicBaseUrl?.replace(/\/+$/, '') ?? ''}/invite/${token}`;
    let mailed = false;
    let workspaceName = '';
    await this.deps.db.transaction(async (tx) => {
      const m = await this.deps.authz.requireMember(actor, { workspaceId: serverId, db: tx.db });
      if (serverId === DIRECT_SPACE_ID) {
        throw validation('the direct space has no invites: start a conversation instead');
      }
      assertCan(m.role, role === 'guest' ? 'invite:createGuest' : 'invite:create');
      workspaces.membership.assertNotTimedOut(m);
      if (role === 'guest') {
        if (channelIds.length === 0) {
          throw validation('a guest invite names the channels the guest gets (channelIds)');
        }
        if (channelIds.length > GUEST_CHANNELS_MAX) {
          throw validation(`a guest invite names at most ${GUEST_CHANNELS_MAX} channels`);
        }
        const found = await findChannelsIn(tx.db, serverId, channelIds.filter(isId));
        if (found.length !== channelIds.length) throw notFound('channel');
        for (const c of found) {
          // Only a channel the inviter may read can be given (a private one: by someone in it).
          const mine = await findConversationMember(tx.db, c.id, accountId);
          if (!canRead(readFactsFrom(c, m.role, mine), now)) throw notFound('channel');
          assertWritable(c);
        }
      } else if (channelIds.length > 0) {
        throw validation('channelIds are for guest invites; members get every public channel');
      }
      const cap = config.limits.invitesPerUserPerDay;
      if (cap !== null) {
        await lockAccount(tx.db, accountId);
        if ((await countInvitesCreatedSince(tx.db, accountId, now - DAY_MS)) >= cap) {
          throw capExceeded('invites per user per day', 'SVC_LIMIT_INVITES_PER_USER_PER_DAY', cap);
        }
      }
      workspaceName = (await findWorkspace(tx.db, serverId))?.name ?? '';
      await insertInvite(tx.db, row);
      if (email && this.deps.mailer && this.deps.featureState('email') !== 'disabled') {
        mailed = true;
        const mailer = this.deps.mailer;
        // Sent after commit without holding up the answer; a failure is only logged.
        tx.onCommit(() => {
          void mailer
            .send({
              to: email,
              subject: `You are invited to ${workspaceName}`,
              text: [
                `You have been invited to join the workspace "${workspaceName}".`,
                '',
                // A path alone leads nowhere from a mail client: the token instead.
                config.server.publicBaseUrl
                  ? `Open this link to join: ${link}`
                  : `Join in the app with this invite token: ${token}`,
                '',
                `The invite expires at ${new Date(row.expiresAt as number).toISOString()}.`,
              ].join('\n'),
            })
            .catch((err: unknown) =>
              this.deps.log.warn({ err, inviteId: row.id }, 'invite mail was not sent'),
            );
        });
      }
    });
    return { invite: toView(row, now), token, link, mailed };
  }

  /**
   * The workspace's usable invites, newest first, a page at a time (contract: Pagination): all
   * of them for staff, one's own for everyone else.
   */
  async list(actor: Actor, serverId: string, args: KeysetArgs = {}): Promise<InviteView[]> {
    const accountId = actingAccountId(actor);
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    const m = await this.deps.authz.requireMember(actor, { workspaceId: serverId });
    if (serverId === DIRECT_SPACE_ID) return [];
    const now = this.now();
    const mine = !can(m.role, 'invite:manage');
    const rows = await listUsableInvites(
      this.deps.db.kysely,
      serverId,
      now,
      mine ? accountId : null,
      page,
    );
    return keysetRows(rows, page).map((r) => toView(r, now));
  }

  /** Revokes an invite: its creator, or the workspace's staff. Revoking again changes nothing. */
  async revoke(actor: Actor, inviteId: string): Promise<InviteView> {
    const accountId = actingAccountId(actor);
    return this.deps.db.transaction(async (tx) => {
      const invite = isId(inviteId) ? await findInvite(tx.db, inviteId) : undefined;
      if (!invite) throw notFound('invite');
      const m = await this.deps.authz.membership(actor, {
        workspaceId: invite.workspaceId,
        db: tx.db,
      });
      if (!m) throw notFound('invite');
      if (invite.createdBy !== accountId) assertCan(m.role, 'invite:manage');
      this.deps.workspaces.membership.assertNotTimedOut(m);
      const now = this.now();
      await revokeInvite(tx.db, invite.id, now);
      return toView({ ...invite, revokedAt: invite.revokedAt ?? now }, now);
    });
  }

  /**
   * Joins the workspace of an invite token: INVALID_TOKEN for an unknown, used-up or revoked
   * one, EXPIRED_TOKEN past its expiry, VALIDATION past the member cap. A member already in the
   * workspace gets it back without spending a use.
   */
  async join(actor: Actor, token: string): Promise<WorkspaceView> {
    const accountId = actingAccountId(actor);
    const workspaceId = await this.deps.db.transaction(async (tx) => {
      const redeemed = await this.redeem(tx, token, accountId);
      if (!redeemed) throw invalidToken();
      return redeemed.workspaceId;
    });
    this.deps.authz.forget(actor, workspaceId);
    return this.deps.workspaces.lifecycle.get(actor, workspaceId);
  }

  /** The signup port: null when the token is no workspace invite at all. */
  async redeemForSignup(
    tx: Tx,
    token: string,
    accountId: string,
  ): Promise<{ workspaceId: string } | null> {
    return this.redeem(tx, token, accountId);
  }

  private async redeem(
    tx: Tx,
    token: string,
    accountId: string,
  ): Promise<{ workspaceId: string } | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > TOKEN_MAX) return null;
    const invite = await findInviteByTokenHash(tx.db, hashInviteToken(token));
    if (!invite) return null;
    if (invite.revokedAt !== null) throw invalidToken();
    if (invite.maxUses !== null && invite.uses >= invite.maxUses) throw invalidToken();
    if (invite.expiresAt !== null && invite.expiresAt <= this.now()) {
      throw new AppError('EXPIRED_TOKEN', 'this invite has expired; ask for a new one');
    }
    if (await findMember(tx.db, invite.workspaceId, accountId)) {
      return { workspaceId: invite.workspaceId };
    }
    await this.deps.workspaces.membership.addMember(tx, invite.workspaceId, accountId, {
      role: invite.role,
      channelIds: parseIds(invite.guestChannelIds),
      inviteId: invite.id,
    });
    if (!(await consumeInviteUse(tx.db, invite.id))) throw invalidToken();
    return { workspaceId: invite.workspaceId };
  }
}

function parseIds(json: string | null): string[] {
  if (!json) return [];
  const value: unknown = JSON.parse(json);
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function toView(row: WorkspaceInviteTable, now: number): InviteView {
  const state: InviteView['state'] =
    row.revokedAt !== null
      ? 'revoked'
      : row.expiresAt !== null && row.expiresAt <= now
        ? 'expired'
        : row.maxUses !== null && row.uses >= row.maxUses
          ? 'usedUp'
          : 'active';
  return {
    id: row.id,
    serverId: row.workspaceId,
    role: row.role,
    createdById: row.createdBy,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    maxUses: row.maxUses,
    uses: row.uses,
    revokedAt: row.revokedAt,
    email: row.email,
    channelIds: parseIds(row.guestChannelIds),
    state,
  };
}
