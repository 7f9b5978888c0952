import type { Executor } from '../../db/database.js';
import { lockInstance } from '../instance/index.js';
import type {
  AbuseReportTable,
  PrincipalBlockTable,
  ReportSubjectKind,
} from '../../db/tables/moderation.js';

import { accountNotBlocked } from '../principals/index.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';

// Moderation queries, executor first.

// --- reports ---------------------------------------------------------------------------------

/** A message with what a report needs: its conversation, workspace and author. */
export async function findMessageForReport(db: Executor, messageId: string) {
  return db
    .selectFrom('message as m')
    .innerJoin('conversation as c', 'c.id', 'm.conversationId')
    .innerJoin('workspace as w', 'w.id', 'c.workspaceId')
    .leftJoin('account as a', 'a.id', 'm.authorId')
    .leftJoin('mls_message as mm', 'mm.messageId', 'm.id')
    .select([
      'm.id',
      'm.conversationId',
      'm.authorId',
      'm.text',
      'm.ciphertext',
      'm.createdAt',
      'm.editedAt',
      'm.deletedAt',
      'm.threadRootId',
      'c.workspaceId',
      'c.kind as conversationKind',
      'c.isPrivate',
      'c.encrypted',
      'c.name as conversationName',
      'w.isDirect',
      'a.username as authorUsername',
      'a.displayName as authorDisplayName',
      'mm.frankingCommitment',
      'mm.frankingTag',
    ])
    .where('m.id', '=', messageId)
    .executeTakeFirst();
}

export async function findAccountBrief(db: Executor, id: string) {
  return db
    .selectFrom('account')
    .select(['id', 'username', 'displayName', 'deletedAt', 'isOperator'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findWorkspaceForReport(db: Executor, id: string) {
  return db
    .selectFrom('workspace as w')
    .leftJoin('account as a', 'a.id', 'w.ownerId')
    .select([
      'w.id',
      'w.name',
      'w.description',
      'w.ownerId',
      'w.isDirect',
      'a.username as ownerUsername',
    ])
    .where('w.id', '=', id)
    .executeTakeFirst();
}

export async function findOpenReport(
  db: Executor,
  reporterId: string,
  subjectKind: ReportSubjectKind,
  subjectId: string,
) {
  return reportQuery(db)
    .where('r.reporterId', '=', reporterId)
    .where('r.subjectKind', '=', subjectKind)
    .where('r.subjectId', '=', subjectId)
    .where('r.resolvedAt', 'is', null)
    .executeTakeFirst();
}

/** Reports one person filed since `since`, oldest first (for the hourly limit). */
export async function reportTimesSince(db: Executor, reporterId: string, since: number) {
  const rows = await db
    .selectFrom('abuse_report')
    .select('createdAt')
    .where('reporterId', '=', reporterId)
    .where('createdAt', '>', since)
    .orderBy('createdAt')
    .execute();
  return rows.map((r) => Number(r.createdAt));
}

export async function insertReport(db: Executor, row: AbuseReportTable) {
  await db.insertInto('abuse_report').values(row).execute();
}

/** Reports with the current username of the account they are about. */
export function reportQuery(db: Executor) {
  return db
    .selectFrom('abuse_report as r')
    .leftJoin('account as s', 's.id', 'r.subjectAccountId')
    .leftJoin('account as rp', 'rp.id', 'r.reporterId')
    .selectAll('r')
    .select(['s.username as subjectUsername', 'rp.username as reporterUsername']);
}

export type ReportRow = NonNullable<Awaited<ReturnType<typeof findReport>>>;

export async function findReport(db: Executor, id: string) {
  return reportQuery(db).where('r.id', '=', id).executeTakeFirst();
}

/** A page of reports, oldest first over (createdAt, id), after an optional position. */
/** One keyset page of reports, oldest first: a workspace's, or every one. */
export async function listReports(
  db: Executor,
  opts: { workspaceId?: string; openOnly: boolean; page: KeysetPage },
) {
  let q = reportQuery(db);
  if (opts.workspaceId !== undefined) {
    q = q.where('r.workspaceId', '=', opts.workspaceId);
    if (opts.openOnly) q = q.where('r.workspaceResolvedAt', 'is', null);
  } else if (opts.openOnly) {
    q = q.where('r.resolvedAt', 'is', null);
  }
  return keysetQuery(q, { at: 'r.createdAt', key: 'r.id' }, 'asc', opts.page).execute();
}

export async function markReportResolved(
  db: Executor,
  id: string,
  scope: 'instance' | 'workspace',
  at: number,
  by: string,
): Promise<boolean> {
  const res =
    scope === 'instance'
      ? await db
          .updateTable('abuse_report')
          .set({ resolvedAt: at, resolvedBy: by })
          .where('id', '=', id)
          .where('resolvedAt', 'is', null)
          .executeTakeFirst()
      : await db
          .updateTable('abuse_report')
          .set({ workspaceResolvedAt: at, workspaceResolvedBy: by })
          .where('id', '=', id)
          .where('workspaceResolvedAt', 'is', null)
          .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// --- principal blocks ------------------------------------------------------------------------

/**
 * Serialises principal blocks for the rest of the transaction (a no-op update of the one
 * `instance` row: a row lock on PostgreSQL, the write lock on SQLite), so two operators blocking
 * each other at once cannot both pass the last-operator check.
 */
export async function lockPrincipalBlocks(db: Executor): Promise<void> {
  await lockInstance(db);
}

export async function findPrincipalBlock(db: Executor, principalId: string) {
  return db
    .selectFrom('principal_block')
    .selectAll()
    .where('principalId', '=', principalId)
    .executeTakeFirst();
}

export async function insertPrincipalBlock(db: Executor, row: PrincipalBlockTable) {
  await db.insertInto('principal_block').values(row).execute();
}

export async function deletePrincipalBlock(db: Executor, principalId: string): Promise<boolean> {
  const res = await db
    .deleteFrom('principal_block')
    .where('principalId', '=', principalId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Principal blocks, newest first: every one, or one keyset page when `page` is given. */
export async function listPrincipalBlocks(db: Executor, page?: KeysetPage) {
  const q = db.selectFrom('principal_block').selectAll();
  if (page) return keysetQuery(q, { at: 'createdAt', key: 'principalId' }, 'desc', page).execute();
  return q.orderBy('createdAt', 'desc').orderBy('principalId', 'desc').execute();
}

const accountCols = [
  'id',
  'username',
  'usernameKey',
  'keyIdentityId',
  'homeServer',
  'isOperator',
  'deletedAt',
] as const;

/** The accounts (tombstones included) a principal covers. */
export async function accountsOfPrincipal(
  db: Executor,
  p:
    | { kind: 'user'; accountId: string }
    | { kind: 'key'; keyIdentityId: string }
    | { kind: 'server'; host: string }
    | { kind: 'remote'; username: string; host: string },
) {
  const q = db.selectFrom('account').select(accountCols);
  switch (p.kind) {
    case 'user':
      return q.where('id', '=', p.accountId).execute();
    case 'key':
      return q.where('keyIdentityId', '=', p.keyIdentityId).orderBy('createdAt').execute();
    case 'server':
      return q
        .where((eb) => eb(eb.fn('lower', ['homeServer']), '=', p.host))
        .orderBy('createdAt')
        .execute();
    case 'remote':
      return q
        .where((eb) => eb(eb.fn('lower', ['homeServer']), '=', p.host))
        .where('usernameKey', 'in', [p.username, `${p.username}@${p.host}`])
        .execute();
  }
}

/** Live operators outside `excludedIds` that no principal block covers. */
export async function countOtherUnblockedOperators(
  db: Executor,
  excludedIds: string[],
): Promise<number> {
  let q = db
    .selectFrom('account')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('isOperator', '=', 1)
    .where('deletedAt', 'is', null)
    .where(accountNotBlocked());
  if (excludedIds.length > 0) q = q.where('id', 'not in', excludedIds);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Non-deleted messages some accounts wrote. */
export async function messagesBy(db: Executor, accountIds: string[]) {
  if (accountIds.length === 0) return [];
  return db
    .selectFrom('message')
    .select('id')
    .where('authorId', 'in', accountIds)
    .where('deletedAt', 'is', null)
    .execute();
}

/** Workspaces (not the direct space) some accounts own, with their members. */
export async function workspacesOwnedBy(db: Executor, accountIds: string[]) {
  if (accountIds.length === 0) return [];
  return db
    .selectFrom('workspace')
    .select(['id', 'name'])
    .where('ownerId', 'in', accountIds)
    .where('isDirect', '=', 0)
    .execute();
}

/** Usernames of live accounts holding these key identities, by key identity. */
export async function usernamesByKeyIdentity(db: Executor, keyIds: string[]) {
  if (keyIds.length === 0) return new Map<string, string>();
  const rows = await db
    .selectFrom('account')
    .select(['keyIdentityId', 'username'])
    .where('keyIdentityId', 'in', keyIds)
    .orderBy('createdAt')
    .execute();
  const out = new Map<string, string>();
  for (const r of rows)
    if (r.keyIdentityId && !out.has(r.keyIdentityId)) out.set(r.keyIdentityId, r.username);
  return out;
}

export async function usernamesByIds(db: Executor, ids: string[]) {
  if (ids.length === 0) return new Map<string, string>();
  const rows = await db
    .selectFrom('account')
    .select(['id', 'username'])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((r) => [r.id, r.username]));
}

/** A finalized attachment of a message with the given blob (sha256 hex), for a report. */
export async function findMessageAttachmentByBlob(db: Executor, messageId: string, sha256: string) {
  return db
    .selectFrom('attachment')
    .select(['id', 'sha256', 'sizeBytes'])
    .where('messageId', '=', messageId)
    .where('sha256', '=', sha256)
    .executeTakeFirst();
}
