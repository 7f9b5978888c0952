import type { Logger } from 'pino';

import { actingUser, type Actor } from '../../auth/actor.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import { workspaceTopic } from '../../events/catalog.js';
import type { EventPort } from '../../events/port.js';
import { conflict, notFound, validation } from '../../errors.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';
import {
  assertLocalAccount,
  findAccountById,
  scheduleDeletion,
  unscheduleDeletion,
  writeTombstone,
  lookupKey,
  type AccountViewCache,
} from '../accounts/index.js';
import type { MessageRemover } from '../messages/index.js';
import type { SessionService } from '../sessions/index.js';
import { transferOwnership } from '../workspaces/index.js';

import {
  dueAccountIds,
  lockDueAccount,
  ownedWorkspaces,
  ownedWorkspacesWithOthers,
  purgeAccountRows,
  successorOf,
  usernameKeyTaken,
} from './queries.js';

/**
 * One area's part of the purge, run inside the account's purge transaction before the core
 * removes anything but sessions (files, automations, ... as areas arrive). Must be idempotent;
 * work outside the database (deleting files) goes in `tx.onCommit`.
 */
export type PurgeStep = (tx: Tx, accountId: string, now: number) => Promise<void>;

/**
 * What the purge asks of the workspaces area: deleting a workspace inside the purge transaction
 * with that area's own deletion hooks and events.
 */
export interface WorkspacePurgePort {
  deleteForPurge(tx: Tx, workspaceId: string, by: string | null): Promise<void>;
}

/** Accounts purged per run; the next hourly run continues. */
const PURGE_BATCH = 200;

export const TOMBSTONE_DISPLAY_NAME = 'Deleted account';

/**
 * Account deletion (docs/account-deletion.md): the request with its grace period, its
 * cancellation, and the purge that leaves a tombstone.
 */
export class AccountDeletionService {
  private readonly steps: Array<{ name: string; run: PurgeStep }> = [];

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly sessions: SessionService,
    private readonly events: EventPort,
    private readonly log: Logger,
    private readonly workspaces: WorkspacePurgePort,
    private readonly messages: MessageRemover,
    /** Accounts shown as `User`: the deletion date and the tombstone change what they show. */
    private readonly views: AccountViewCache,
  ) {}

  /** Adds an area's step to every purge (see PurgeStep). */
  addPurgeStep(name: string, run: PurgeStep): void {
    this.steps.push({ name, run });
  }

  /**
   * Schedules the caller's account for purging after the grace period and ends every other
   * session. The account works as before until then.
   */
  async request(actor: Actor, confirmUsername: unknown): Promise<{ scheduledFor: number }> {
    const session = actingUser(actor);
    assertLocalAccount(session);
    const account = await findAccountById(this.db.kysely, session.accountId);
    if (!account || account.deletedAt !== null) throw notFound('account');
    if (typeof confirmUsername !== 'string' || lookupKey(confirmUsername) !== account.usernameKey) {
      throw validation('confirmUsername must be your username');
    }
    if (account.deletionScheduledFor !== null) {
      throw conflict('deletion of this account is pending already; cancel it first');
    }
    const owned = await ownedWorkspacesWithOthers(this.db.kysely, account.id);
    if (owned.length > 0) {
      throw validation(
        `you own workspaces with other members (${owned.map((w) => w.name).join(', ')}); hand them over or delete them first`,
      );
    }
    const now = this.clock.now().getTime();
    const scheduledFor = now + this.config.accountDeletionGraceDays * DAY_MS;
    await this.db.transaction(async (tx) => {
      if (!(await scheduleDeletion(tx.db, account.id, now, scheduledFor))) {
        throw conflict('deletion of this account is pending already; cancel it first');
      }
      this.views.changedOnCommit(tx, account.id);
      await this.sessions.end(
        tx,
        { accountId: account.id, exceptSessionId: session.sessionId },
        'account_deletion_requested',
      );
    });
    return { scheduledFor };
  }

  /** Cancels a pending deletion; whether one was pending. */
  async cancel(actor: Actor): Promise<boolean> {
    const session = actingUser(actor);
    assertLocalAccount(session);
    const cancelled = await unscheduleDeletion(this.db.kysely, session.accountId);
    if (cancelled) this.views.changed(session.accountId);
    return cancelled;
  }

  /**
   * Purges every account whose grace period ended by `now` (the hourly job and `svc account
   * purge`). Each account is one transaction, so a crash leaves every account either untouched
   * (purged again by the next run) or purged; an account purged already is skipped.
   * `ignoreGrace` also purges requests whose grace period is still running (`--now`).
   */
  async purgeDue(
    now: number = this.clock.now().getTime(),
    opts: { ignoreGrace?: boolean } = {},
  ): Promise<string[]> {
    const cutoff = opts.ignoreGrace ? Number.MAX_SAFE_INTEGER : now;
    const purged: string[] = [];
    const failed = new Set<string>();
    for (;;) {
      const ids = (await dueAccountIds(this.db.kysely, cutoff, PURGE_BATCH + failed.size)).filter(
        (id) => !failed.has(id),
      );
      if (ids.length === 0) break;
      for (const id of ids) {
        try {
          if (await this.purgeAccount(id, now, cutoff)) purged.push(id);
        } catch (err) {
          // One broken account must not hold up the others; the next run retries it.
          failed.add(id);
          this.log.error({ err, accountId: id }, 'account purge failed');
        }
      }
    }
    if (purged.length > 0) this.log.info({ accounts: purged.length }, 'accounts purged');
    return purged;
  }

  private async purgeAccount(accountId: string, now: number, cutoff: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const account = await lockDueAccount(tx.db, accountId, cutoff, this.db.dialect);
      if (!account) return false;
      await this.sessions.end(tx, { accountId }, 'account_purged');
      // Areas' steps first: they may need rows the core removes (a message's attachments),
      // and may settle the account's workspaces themselves.
      for (const step of this.steps) await step.run(tx, accountId, now);
      await this.settleOwnedWorkspaces(tx, accountId, now);
      await this.messages.purgeAuthor(tx, accountId, now);
      await purgeAccountRows(tx.db, accountId);
      await writeTombstone(tx.db, accountId, await this.tombstoneName(tx, accountId), now);
      this.views.changedOnCommit(tx, accountId);
      return true;
    });
  }

  /**
   * A workspace the account alone belongs to goes with it. One that gained members after the
   * request (the request refuses otherwise) passes to its longest-standing moderator, member or
   * guest, so the purge never leaves a workspace without an owner.
   */
  private async settleOwnedWorkspaces(tx: Tx, accountId: string, now: number) {
    for (const ws of await ownedWorkspaces(tx.db, accountId)) {
      if (ws.others === 0) {
        await this.workspaces.deleteForPurge(tx, ws.id, null);
        continue;
      }
      const heir = await successorOf(tx.db, ws.id, accountId);
      if (!heir) continue;
      await transferOwnership(tx.db, ws.id, heir.accountId);
      this.events.publishOnCommit(tx, {
        topic: workspaceTopic(ws.id),
        type: 'MemberRoleChanged',
        at: now,
        payload: {
          audience: { kind: 'workspace' },
          serverId: ws.id,
          userId: heir.accountId,
          role: 'owner',
          previousRole: heir.role,
          changedBy: accountId,
        },
      });
    }
  }

  /** `deleted-` and the shortest start of the id (at least 8 characters) no account holds. */
  private async tombstoneName(tx: Tx, accountId: string): Promise<string> {
    for (const length of [8, 13, 18, 23]) {
      const name = `deleted-${accountId.slice(0, length)}`;
      if (!(await usernameKeyTaken(tx.db, name.toLowerCase()))) return name;
    }
    return `deleted-${accountId}`;
  }
}
