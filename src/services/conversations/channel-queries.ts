import type { Executor } from '../../db/database.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import { keysetQuery, type KeysetPage } from '../paging/index.js';

// Channel queries (channels are conversations of kind 'channel', so the conversations area owns
// their rows; channels/ and workspaces/ call these), executor first.

export async function findChannel(db: Executor, id: string) {
  return db
    .selectFrom('conversation')
    .selectAll()
    .where('id', '=', id)
    .where('kind', '=', 'channel')
    .executeTakeFirst();
}

export async function countChannels(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('conversation')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId', '=', workspaceId)
    .where('kind', '=', 'channel')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findChannelByName(db: Executor, workspaceId: string, name: string) {
  return db
    .selectFrom('conversation')
    .select('id')
    .where('workspaceId', '=', workspaceId)
    .where('kind', '=', 'channel')
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function insertChannel(db: Executor, row: ConversationTable) {
  await db.insertInto('conversation').values(row).execute();
}

export async function updateChannel(
  db: Executor,
  id: string,
  patch: Partial<Pick<ConversationTable, 'name' | 'topic' | 'archivedAt'>>,
) {
  await db.updateTable('conversation').set(patch).where('id', '=', id).execute();
}

/** Ids of a workspace's public channels that are not archived (what a new member joins). */
export async function listOpenPublicChannelIds(db: Executor, workspaceId: string) {
  const rows = await db
    .selectFrom('conversation')
    .select('id')
    .where('workspaceId', '=', workspaceId)
    .where('kind', '=', 'channel')
    .where('isPrivate', '=', 0)
    .where('archivedAt', 'is', null)
    .execute();
  return rows.map((r) => r.id);
}

/** Which of these ids are channels of the workspace; the rows, in one query. */
export async function findChannelsIn(db: Executor, workspaceId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('conversation')
    .selectAll()
    .where('workspaceId', '=', workspaceId)
    .where('kind', '=', 'channel')
    .where('id', 'in', ids)
    .execute();
}

/**
 * The channels of a workspace an account can see: public ones (unless `guest`) and the ones the
 * account is a member of; one query over the workspace's channels and the account's channel
 * memberships. Every one by name, or one keyset page, oldest first, when `page` is given.
 */
export async function listVisibleChannels(
  db: Executor,
  workspaceId: string,
  accountId: string,
  opts: { guest: boolean; includeArchived: boolean; page?: KeysetPage },
) {
  let q = db
    .selectFrom('conversation as c')
    .leftJoin('conversation_member as cm', (j) =>
      j.onRef('cm.conversationId', '=', 'c.id').on('cm.accountId', '=', accountId),
    )
    .selectAll('c')
    .where('c.workspaceId', '=', workspaceId)
    .where('c.kind', '=', 'channel');
  q = opts.guest
    ? q.where('cm.accountId', 'is not', null)
    : q.where((eb) => eb.or([eb('c.isPrivate', '=', 0), eb('cm.accountId', 'is not', null)]));
  if (!opts.includeArchived) q = q.where('c.archivedAt', 'is', null);
  if (opts.page)
    return keysetQuery(q, { at: 'c.createdAt', key: 'c.id' }, 'asc', opts.page).execute();
  return q.orderBy('c.name').orderBy('c.id').execute();
}

export async function findConversationMember(
  db: Executor,
  conversationId: string,
  accountId: string,
) {
  return db
    .selectFrom('conversation_member')
    .selectAll()
    .where('conversationId', '=', conversationId)
    .where('accountId', '=', accountId)
    .executeTakeFirst();
}

/** Adds people to conversations (every pair), skipping those already in. */
export async function addConversationMembers(
  db: Executor,
  rows: ReadonlyArray<{ conversationId: string; accountId: string }>,
  joinedAt: number,
) {
  if (rows.length === 0) return;
  await db
    .insertInto('conversation_member')
    .values(
      rows.map((r) => ({
        conversationId: r.conversationId,
        accountId: r.accountId,
        state: 'member' as const,
        joinedAt,
        lastReadAt: null,
        lastReadMessageId: null,
      })),
    )
    .onConflict((oc) => oc.columns(['conversationId', 'accountId']).doNothing())
    .execute();
}

/** Which of these accounts are already members of the conversation. */
export async function existingConversationMembers(
  db: Executor,
  conversationId: string,
  accountIds: readonly string[],
): Promise<Set<string>> {
  if (accountIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('conversation_member')
    .select('accountId')
    .where('conversationId', '=', conversationId)
    .where('accountId', 'in', accountIds)
    .execute();
  return new Set(rows.map((r) => r.accountId));
}
