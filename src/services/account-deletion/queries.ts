import { sql } from 'kysely';

import type { Executor } from '../../db/database.js';
import { deletePasswordResetsOf } from '../accounts/index.js';
import { deleteConversationMembershipsOf } from '../conversations/index.js';
import { deleteDevicesOf } from '../devices/index.js';
import { deleteDmRowsOf } from '../dm/index.js';
import { deleteReactionsBy } from '../messages/index.js';
import { deleteSessionsOf } from '../sessions/index.js';
import { deleteWorkspaceMembershipsOf } from '../workspaces/index.js';

/** Names of the workspaces the account owns that have other members. */
export async function ownedWorkspacesWithOthers(db: Executor, accountId: string) {
  return db
    .selectFrom('workspace')
    .select(['workspace.id', 'workspace.name'])
    .where('workspace.ownerId', '=', accountId)
    .where('workspace.isDirect', '=', 0)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('workspace_member')
          .select('workspace_member.accountId')
          .whereRef('workspace_member.workspaceId', '=', 'workspace.id')
          .where('workspace_member.accountId', '!=', accountId),
      ),
    )
    .orderBy('workspace.name')
    .execute();
}

/** Accounts whose grace period ended by `cutoff` and that are not purged yet, oldest first. */
export async function dueAccountIds(db: Executor, cutoff: number, limit: number) {
  const rows = await db
    .selectFrom('account')
    .select('id')
    .where('deletedAt', 'is', null)
    .where('deletionScheduledFor', 'is not', null)
    .where('deletionScheduledFor', '<=', cutoff)
    .orderBy('deletionScheduledFor')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** The account row, locked to commit on PostgreSQL, while it is still due. */
export async function lockDueAccount(
  db: Executor,
  accountId: string,
  cutoff: number,
  dialect: 'sqlite' | 'postgres',
) {
  if (dialect === 'postgres') {
    await sql`select id from account where id = ${accountId} for update`.execute(db);
  }
  return db
    .selectFrom('account')
    .selectAll()
    .where('id', '=', accountId)
    .where('deletedAt', 'is', null)
    .where('deletionScheduledFor', 'is not', null)
    .where('deletionScheduledFor', '<=', cutoff)
    .executeTakeFirst();
}

export async function usernameKeyTaken(db: Executor, key: string) {
  const row = await db
    .selectFrom('account')
    .select('id')
    .where('usernameKey', '=', key)
    .executeTakeFirst();
  return row !== undefined;
}

/** Non-direct workspaces the account owns, each with how many other members it has. */
export async function ownedWorkspaces(db: Executor, accountId: string) {
  const rows = await db
    .selectFrom('workspace')
    .select((eb) => [
      'workspace.id',
      eb
        .selectFrom('workspace_member')
        .select((m) => m.fn.countAll<number | string>().as('n'))
        .whereRef('workspace_member.workspaceId', '=', 'workspace.id')
        .where('workspace_member.accountId', '!=', accountId)
        .as('others'),
    ])
    .where('workspace.ownerId', '=', accountId)
    .where('workspace.isDirect', '=', 0)
    .execute();
  return rows.map((r) => ({ id: r.id, others: Number(r.others ?? 0) }));
}

/**
 * The member who inherits a workspace: the longest-standing moderator, else the longest-standing
 * member, else the longest-standing guest.
 */
export async function successorOf(db: Executor, workspaceId: string, accountId: string) {
  return db
    .selectFrom('workspace_member')
    .select(['accountId', 'role'])
    .where('workspaceId', '=', workspaceId)
    .where('accountId', '!=', accountId)
    .orderBy(
      (eb) =>
        eb
          .case()
          .when('role', '=', 'moderator')
          .then(0)
          .when('role', '=', 'member')
          .then(1)
          .else(2)
          .end(),
      'asc',
    )
    .orderBy('joinedAt', 'asc')
    .orderBy('accountId', 'asc')
    .executeTakeFirst();
}

/**
 * Everything else the account holds that the purge removes (docs/account-deletion.md), each
 * table through its owner's query function.
 */
export async function purgeAccountRows(db: Executor, accountId: string) {
  await deleteReactionsBy(db, [accountId]);
  await deleteConversationMembershipsOf(db, accountId);
  await deleteWorkspaceMembershipsOf(db, accountId);
  await deleteDmRowsOf(db, accountId);
  await deletePasswordResetsOf(db, accountId);
  await deleteDevicesOf(db, accountId);
  await deleteSessionsOf(db, accountId);
}
