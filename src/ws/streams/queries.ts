import type { Executor } from '../../db/database.js';

// What a subscriber's stream needs to decide, per event, who may see it. Read once at subscribe
// and after membership events; never per delivered event.

/** The workspace (or direct space) and the caller's role in it; undefined when it does not exist. */
export async function findWorkspaceAccess(db: Executor, workspaceId: string, accountId: string) {
  return db
    .selectFrom('workspace as w')
    .leftJoin('workspace_member as wm', (j) =>
      j.onRef('wm.workspaceId', '=', 'w.id').on('wm.accountId', '=', accountId),
    )
    .select(['w.id', 'w.isDirect', 'wm.role'])
    .where('w.id', '=', workspaceId)
    .executeTakeFirst();
}

/** Conversations of a workspace the account is a member of (pending invitees are not). */
export async function listMemberConversationIds(
  db: Executor,
  workspaceId: string,
  accountId: string,
): Promise<string[]> {
  const rows = await db
    .selectFrom('conversation_member as cm')
    .innerJoin('conversation as c', 'c.id', 'cm.conversationId')
    .select('cm.conversationId')
    .where('c.workspaceId', '=', workspaceId)
    .where('cm.accountId', '=', accountId)
    .where('cm.state', '=', 'member')
    .execute();
  return rows.map((r) => r.conversationId);
}

/** Of these accounts, the ones that are members of the conversation. */
export async function membersAmong(
  db: Executor,
  conversationId: string,
  accountIds: readonly string[],
): Promise<string[]> {
  if (accountIds.length === 0) return [];
  const rows = await db
    .selectFrom('conversation_member')
    .select('accountId')
    .where('conversationId', '=', conversationId)
    .where('accountId', 'in', accountIds)
    .where('state', '=', 'member')
    .execute();
  return rows.map((r) => r.accountId);
}
