import type { Executor } from '../../db/database.js';
import type { InstanceInviteTable } from '../../db/tables/accounts.js';

export async function insertInstanceInvite(db: Executor, row: InstanceInviteTable) {
  await db.insertInto('instance_invite').values(row).execute();
}

export async function findInstanceInviteByTokenHash(db: Executor, tokenHash: string) {
  return db
    .selectFrom('instance_invite')
    .selectAll()
    .where('tokenHash', '=', tokenHash)
    .executeTakeFirst();
}

export async function findInstanceInviteById(db: Executor, id: string) {
  return db.selectFrom('instance_invite').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listInstanceInvites(db: Executor) {
  return db.selectFrom('instance_invite').selectAll().orderBy('createdAt', 'desc').execute();
}

/**
 * Spends one use of an invite unless it is used up or revoked; false when nothing was spent.
 * One conditional UPDATE, so two signups racing for the last use cannot both win.
 */
export async function spendInstanceInvite(db: Executor, id: string): Promise<boolean> {
  const result = await db
    .updateTable('instance_invite')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .whereRef('uses', '<', 'maxUses')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function revokeInstanceInvite(db: Executor, id: string, now: number) {
  const result = await db
    .updateTable('instance_invite')
    .set({ revokedAt: now })
    .where('id', '=', id)
    .where('revokedAt', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records a spent proof-of-work salt; false when it was spent before (a replay). */
export async function recordPowUse(
  db: Executor,
  row: { salt: string; usedAt: number; expiresAt: number },
): Promise<boolean> {
  await db.deleteFrom('registration_pow_use').where('expiresAt', '<', row.usedAt).execute();
  const result = await db
    .insertInto('registration_pow_use')
    .values(row)
    .onConflict((oc) => oc.column('salt').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function emailKeyInUse(db: Executor, emailKey: string, exceptAccountId?: string) {
  let q = db.selectFrom('account').select('id').where('emailKey', '=', emailKey);
  if (exceptAccountId) q = q.where('id', '!=', exceptAccountId);
  return (await q.executeTakeFirst()) !== undefined;
}

export async function setAccountEmail(
  db: Executor,
  accountId: string,
  email: { email: string; key: string },
) {
  await db
    .updateTable('account')
    .set({ email: email.email, emailKey: email.key })
    .where('id', '=', accountId)
    .execute();
}

export async function recordTermsAcceptance(
  db: Executor,
  accountId: string,
  url: string,
  at: number,
) {
  await db
    .updateTable('account')
    .set({ acceptedTermsUrl: url, acceptedTermsAt: at })
    .where('id', '=', accountId)
    .execute();
}

// Default-workspace join used only while the workspaces service does not offer joinAsMember.

export async function findWorkspace(db: Executor, id: string) {
  return db
    .selectFrom('workspace')
    .select(['id', 'isDirect'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function countWorkspaceMembers(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('workspace_member')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWorkspaceMemberWithPublicChannels(
  db: Executor,
  workspaceId: string,
  accountId: string,
  now: number,
) {
  await db
    .insertInto('workspace_member')
    .values({ workspaceId, accountId, role: 'member', joinedAt: now, timedOutUntil: null })
    .execute();
  const channels = await db
    .selectFrom('conversation')
    .select('id')
    .where('workspaceId', '=', workspaceId)
    .where('kind', '=', 'channel')
    .where('isPrivate', '=', 0)
    .where('archivedAt', 'is', null)
    .execute();
  if (channels.length === 0) return;
  await db
    .insertInto('conversation_member')
    .values(
      channels.map((c) => ({
        conversationId: c.id,
        accountId,
        state: 'member' as const,
        joinedAt: now,
        lastReadAt: null,
        lastReadMessageId: null,
      })),
    )
    .execute();
}
