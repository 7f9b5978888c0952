import { everyColumn } from '../../db/statements/columns.js';
import type { Executor } from '../../db/database.js';
import { preparedQuery } from '../../db/statements/prepared.js';
import type {
  WorkspaceInviteTable,
  WorkspaceMemberTable,
  WorkspaceRole,
  WorkspaceTable,
} from '../../db/tables/workspaces.js';
import { deleteMembershipsInWorkspace } from '../conversations/index.js';
import { keysetQuery, pastCursor, type KeysetPage } from '../paging/index.js';

// Workspace, membership and invite queries, executor first. Lists are single indexed queries.

export async function findWorkspace(db: Executor, id: string) {
  return db.selectFrom('workspace').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Takes the workspace row's write lock for the rest of the transaction (a no-op update: a row
 * lock on PostgreSQL, the write lock on SQLite), so cap checks and membership changes of one
 * workspace run one at a time. False when the workspace does not exist.
 */
export async function lockWorkspace(db: Executor, id: string): Promise<boolean> {
  const res = await db
    .updateTable('workspace')
    .set((eb) => ({ updatedAt: eb.ref('updatedAt') }))
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function insertWorkspace(db: Executor, row: WorkspaceTable) {
  await db.insertInto('workspace').values(row).execute();
}

export async function updateWorkspace(
  db: Executor,
  id: string,
  patch: Partial<Pick<WorkspaceTable, 'name' | 'description' | 'ownerId' | 'updatedAt'>>,
) {
  await db.updateTable('workspace').set(patch).where('id', '=', id).execute();
}

/** Deletes a workspace; foreign keys cascade to members, conversations, messages and invites. */
export async function deleteWorkspaceRow(db: Executor, id: string) {
  await db.deleteFrom('workspace').where('id', '=', id).execute();
}

export async function countOwnedWorkspaces(db: Executor, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('workspace')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('ownerId', '=', ownerId)
    .where('isDirect', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A workspace with the caller's membership and the member count, in one query. */
export async function findWorkspaceFor(db: Executor, id: string, accountId: string) {
  return workspaceViewQuery(db, accountId).where('w.id', '=', id).executeTakeFirst();
}

/** The workspaces an account is a member of, oldest membership first, in one query. */
export async function listWorkspacesOf(db: Executor, accountId: string) {
  return workspaceViewQuery(db, accountId)
    .where('m.accountId', 'is not', null)
    .orderBy('m.joinedAt')
    .orderBy('w.id')
    .execute();
}

/** A page of the workspaces an account is a member of, in the order joined. */
export async function workspacesOfPage(db: Executor, accountId: string, page: KeysetPage) {
  const q = workspaceViewQuery(db, accountId).where('m.accountId', 'is not', null);
  return keysetQuery(q, { at: 'm.joinedAt', key: 'w.id' }, 'asc', page).execute();
}

function workspaceViewQuery(db: Executor, accountId: string) {
  return db
    .selectFrom('workspace as w')
    .leftJoin('workspace_member as m', (j) =>
      j.onRef('m.workspaceId', '=', 'w.id').on('m.accountId', '=', accountId),
    )
    .selectAll('w')
    .select((eb) => [
      'm.role as myRole',
      'm.timedOutUntil as myTimedOutUntil',
      'm.joinedAt as myJoinedAt',
      eb
        .selectFrom('workspace_member as c')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('c.workspaceId', '=', 'w.id')
        .as('memberCount'),
    ]);
}

export type WorkspaceViewRow = NonNullable<Awaited<ReturnType<typeof findWorkspaceFor>>>;

/** An account's membership of a workspace (every authorization check reads it; prepared). */
export async function findMember(db: Executor, workspaceId: string, accountId: string) {
  return (await findMemberQuery(db, workspaceId, accountId)).rows[0];
}

const MEMBER_COLUMNS = everyColumn<WorkspaceMemberTable>()([
  'workspaceId',
  'accountId',
  'role',
  'joinedAt',
  'timedOutUntil',
]);

const findMemberQuery = preparedQuery(2, (db, workspaceId: string, accountId: string) =>
  db
    .selectFrom('workspace_member')
    .select(MEMBER_COLUMNS)
    .where('workspaceId', '=', workspaceId)
    .where('accountId', '=', accountId),
);

/** The memberships of these accounts in a workspace, in one query. */
export async function findMembers(
  db: Executor,
  workspaceId: string,
  accountIds: readonly string[],
) {
  if (accountIds.length === 0) return [];
  return db
    .selectFrom('workspace_member')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('accountId', 'in', accountIds)
    .execute();
}

export async function insertMember(db: Executor, row: WorkspaceMemberTable) {
  await db.insertInto('workspace_member').values(row).execute();
}

export async function setMemberRole(
  db: Executor,
  workspaceId: string,
  accountId: string,
  role: WorkspaceRole,
) {
  await db
    .updateTable('workspace_member')
    .set({ role })
    .where('workspaceId', '=', workspaceId)
    .where('accountId', '=', accountId)
    .execute();
}

export async function setMemberTimeout(
  db: Executor,
  workspaceId: string,
  accountId: string,
  until: number | null,
) {
  await db
    .updateTable('workspace_member')
    .set({ timedOutUntil: until })
    .where('workspaceId', '=', workspaceId)
    .where('accountId', '=', accountId)
    .execute();
}

/** Removes a member and their channel memberships in the workspace. */
export async function deleteMember(db: Executor, workspaceId: string, accountId: string) {
  await deleteMembershipsInWorkspace(db, workspaceId, accountId);
  await db
    .deleteFrom('workspace_member')
    .where('workspaceId', '=', workspaceId)
    .where('accountId', '=', accountId)
    .execute();
}

export async function countMembers(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('workspace_member')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listMemberIds(db: Executor, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('workspace_member')
    .select('accountId')
    .where('workspaceId', '=', workspaceId)
    .execute();
  return rows.map((r) => r.accountId);
}

/**
 * One page of members with their accounts, in (joinedAt, accountId) order; `after` and `before`
 * are keyset positions. Reads one row more than asked to tell whether more follow.
 */
export async function listMembersPage(
  db: Executor,
  workspaceId: string,
  opts: {
    after?: { at: number; id: string };
    before?: { at: number; id: string };
    limit: number;
    /** Only this member's row (a guest's view of the list). */
    onlyAccountId?: string;
  },
) {
  let q = db
    .selectFrom('workspace_member as m')
    .innerJoin('account as a', 'a.id', 'm.accountId')
    .select([
      'm.accountId',
      'm.role',
      'm.joinedAt',
      'm.timedOutUntil',
      'a.username',
      'a.displayName',
      'a.email',
      'a.createdAt',
      'a.isOperator',
      'a.deletionScheduledFor',
      'a.homeServer',
      'a.avatarPath',
    ])
    .where('m.workspaceId', '=', workspaceId)
    .where('a.deletedAt', 'is', null);
  if (opts.onlyAccountId !== undefined) q = q.where('m.accountId', '=', opts.onlyAccountId);
  const { after, before } = opts;
  if (after) {
    q = q.where(pastCursor({ at: 'm.joinedAt', key: 'm.accountId' }, 'asc', after));
  }
  if (before) {
    q = q.where(pastCursor({ at: 'm.joinedAt', key: 'm.accountId' }, 'desc', before));
    return q
      .orderBy('m.joinedAt', 'desc')
      .orderBy('m.accountId', 'desc')
      .limit(opts.limit + 1)
      .execute();
  }
  return q
    .orderBy('m.joinedAt', 'asc')
    .orderBy('m.accountId', 'asc')
    .limit(opts.limit + 1)
    .execute();
}

export type MemberPageRow = Awaited<ReturnType<typeof listMembersPage>>[number];

// Invites

export async function insertInvite(db: Executor, row: WorkspaceInviteTable) {
  await db.insertInto('workspace_invite').values(row).execute();
}

export async function findInviteByTokenHash(db: Executor, tokenHash: string) {
  return db
    .selectFrom('workspace_invite')
    .selectAll()
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst();
}

export async function findInvite(db: Executor, id: string) {
  return db.selectFrom('workspace_invite').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Counts one use unless the invite is revoked or used up; false when it was not counted. */
export async function consumeInviteUse(db: Executor, id: string): Promise<boolean> {
  const res = await db
    .updateTable('workspace_invite')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .where((eb) => eb.or([eb('maxUses', 'is', null), eb('uses', '<', eb.ref('maxUses'))]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function revokeInvite(db: Executor, id: string, at: number) {
  await db
    .updateTable('workspace_invite')
    .set({ revokedAt: at })
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .execute();
}

/** Invites one person created since a time, in every workspace (the daily cap). */
export async function countInvitesCreatedSince(
  db: Executor,
  createdBy: string,
  since: number,
): Promise<number> {
  const row = await db
    .selectFrom('workspace_invite')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('createdBy', '=', createdBy)
    .where('createdAt', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One keyset page of a workspace's usable invites, newest first; only `createdBy`'s when given. */
export async function listUsableInvites(
  db: Executor,
  workspaceId: string,
  now: number,
  createdBy: string | null,
  page: KeysetPage,
) {
  let q = db
    .selectFrom('workspace_invite')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('revokedAt', 'is', null)
    .where((eb) => eb.or([eb('expiresAt', 'is', null), eb('expiresAt', '>', now)]))
    .where((eb) => eb.or([eb('maxUses', 'is', null), eb('uses', '<', eb.ref('maxUses'))]));
  if (createdBy) q = q.where('createdBy', '=', createdBy);
  return keysetQuery(q, { at: 'createdAt', key: 'id' }, 'desc', page).execute();
}

// Read by the realtime workspace stream at subscribe (services/realtime).

/**
 * What a subscription to a workspace's events reads at subscribe, in one statement: the
 * workspace (or direct space), the caller's role in it, the conversations of it the caller is a
 * member of, and those they are a pending invitee of (with when they were invited). `access` is
 * undefined when the workspace does not exist.
 */
export async function findWorkspaceSubscription(
  db: Executor,
  workspaceId: string,
  accountId: string,
): Promise<{
  access: { id: string; isDirect: number; role: string | null } | undefined;
  conversationIds: string[];
  invitations: Array<{ conversationId: string; invitedAt: number }>;
}> {
  const { rows } = await workspaceSubscriptionQuery(db, workspaceId, accountId);
  const first = rows[0];
  if (!first) return { access: undefined, conversationIds: [], invitations: [] };
  const conversationIds: string[] = [];
  const invitations: Array<{ conversationId: string; invitedAt: number }> = [];
  for (const r of rows) {
    if (r.conversationId === null) continue;
    if (r.state === 'member') conversationIds.push(r.conversationId);
    else invitations.push({ conversationId: r.conversationId, invitedAt: Number(r.joinedAt) });
  }
  return {
    access: { id: first.id, isDirect: first.isDirect, role: first.role },
    conversationIds,
    invitations,
  };
}

/** A row per conversation the caller is in or invited to, or one row without when there is none. */
const workspaceSubscriptionQuery = preparedQuery(2, (db, workspaceId: string, accountId: string) =>
  db
    .selectFrom('workspace as w')
    .leftJoin('workspace_member as wm', (j) =>
      j.onRef('wm.workspaceId', '=', 'w.id').on('wm.accountId', '=', accountId),
    )
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('conversation_member as cm')
          .innerJoin('conversation as c', 'c.id', 'cm.conversationId')
          .select(['cm.conversationId', 'cm.state', 'cm.joinedAt', 'c.workspaceId'])
          .where('cm.accountId', '=', accountId)
          .as('m'),
      (j) => j.onRef('m.workspaceId', '=', 'w.id'),
    )
    .select(['w.id', 'w.isDirect', 'wm.role', 'm.conversationId', 'm.state', 'm.joinedAt'])
    .where('w.id', '=', workspaceId),
);

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

/** Every workspace membership of an account (its purge). */
export async function deleteWorkspaceMembershipsOf(db: Executor, accountId: string) {
  await db.deleteFrom('workspace_member').where('accountId', '=', accountId).execute();
}
