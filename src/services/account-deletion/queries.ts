import { sql } from 'kysely';

import type { Executor } from '../../db/database.js';

export async function scheduleDeletion(
  db: Executor,
  accountId: string,
  requestedAt: number,
  scheduledFor: number,
): Promise<boolean> {
  const res = await db
    .updateTable('account')
    .set({ deletionRequestedAt: requestedAt, deletionScheduledFor: scheduledFor })
    .where('id', '=', accountId)
    .where('deletionScheduledFor', 'is', null)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function unscheduleDeletion(db: Executor, accountId: string): Promise<boolean> {
  const res = await db
    .updateTable('account')
    .set({ deletionRequestedAt: null, deletionScheduledFor: null })
    .where('id', '=', accountId)
    .where('deletionScheduledFor', 'is not', null)
    .where('deletedAt', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

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

export async function transferOwnership(db: Executor, workspaceId: string, newOwnerId: string) {
  await db
    .updateTable('workspace')
    .set({ ownerId: newOwnerId })
    .where('id', '=', workspaceId)
    .execute();
  await db
    .updateTable('workspace_member')
    // An owner cannot be timed out: nobody outranks them.
    .set({ role: 'owner', timedOutUntil: null })
    .where('workspaceId', '=', workspaceId)
    .where('accountId', '=', newOwnerId)
    .execute();
}

/** Everything else the account holds that the purge removes (docs/account-deletion.md). */
export async function purgeAccountRows(db: Executor, accountId: string) {
  await db.deleteFrom('reaction').where('accountId', '=', accountId).execute();
  await db.deleteFrom('conversation_member').where('accountId', '=', accountId).execute();
  await db.deleteFrom('workspace_member').where('accountId', '=', accountId).execute();
  await db.deleteFrom('dm_settings').where('accountId', '=', accountId).execute();
  await db
    .deleteFrom('dm_request')
    .where((eb) => eb.or([eb('fromId', '=', accountId), eb('toId', '=', accountId)]))
    .execute();
  await db
    .deleteFrom('user_block')
    .where((eb) => eb.or([eb('blockerId', '=', accountId), eb('blockedId', '=', accountId)]))
    .execute();
  await db.deleteFrom('password_reset').where('accountId', '=', accountId).execute();
  await db.deleteFrom('device_link_offer').where('accountId', '=', accountId).execute();
  await db.deleteFrom('device').where('accountId', '=', accountId).execute();
  // The identity ids stay (the same identity can never sign up again); the keys go.
  await db
    .updateTable('key_identity')
    .set({ publicKey: null })
    .where('accountId', '=', accountId)
    .execute();
  await db.deleteFrom('session').where('accountId', '=', accountId).execute();
}

export async function writeTombstone(
  db: Executor,
  accountId: string,
  username: string,
  now: number,
) {
  await db
    .updateTable('account')
    .set({
      username,
      usernameKey: username.toLowerCase(),
      displayName: 'Deleted account',
      email: null,
      emailKey: null,
      passwordHash: null,
      avatarPath: null,
      isOperator: 0,
      deletedAt: now,
    })
    .where('id', '=', accountId)
    .execute();
}
