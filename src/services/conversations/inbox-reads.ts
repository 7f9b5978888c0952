import type { Executor } from '../../db/database.js';

// What the conversation list shows beside each conversation: its unread count and its newest
// message. Reads only; re-exported by queries.ts, the area's query surface.

/**
 * Unread counts of the caller in some conversations: messages (not thread replies, not deleted)
 * by others after the read marker, or after joining when there is none. One grouped query.
 */
export async function unreadCounts(
  db: Executor,
  accountId: string,
  conversationIds: readonly string[],
) {
  if (conversationIds.length === 0) return new Map<string, number>();
  const rows = await db
    .selectFrom('message as m')
    .innerJoin('conversation_member as cm', (j) =>
      j.onRef('cm.conversationId', '=', 'm.conversationId').on('cm.accountId', '=', accountId),
    )
    .select(['m.conversationId', (eb) => eb.fn.countAll<number>().as('n')])
    .where('m.conversationId', 'in', conversationIds)
    .where('cm.state', '=', 'member')
    .where('m.threadRootId', 'is', null)
    .where('m.deletedAt', 'is', null)
    .where('m.authorId', '<>', accountId)
    .where((eb) =>
      eb.or([
        eb.and([eb('cm.lastReadAt', 'is', null), eb('m.createdAt', '>=', eb.ref('cm.joinedAt'))]),
        eb('m.createdAt', '>', eb.ref('cm.lastReadAt')),
        eb.and([
          eb('m.createdAt', '=', eb.ref('cm.lastReadAt')),
          eb('m.id', '>', eb.ref('cm.lastReadMessageId')),
        ]),
      ]),
    )
    .groupBy('m.conversationId')
    .execute();
  return new Map(rows.map((r) => [r.conversationId, Number(r.n)]));
}

/** The newest message (not a thread reply) of each conversation. One query. */
export async function lastMessages(db: Executor, conversationIds: readonly string[]) {
  if (conversationIds.length === 0) return [];
  return db
    .selectFrom('message as m')
    .selectAll('m')
    .where('m.conversationId', 'in', conversationIds)
    .where((eb) =>
      eb(
        'm.id',
        '=',
        eb
          .selectFrom('message as l')
          .select('l.id')
          .whereRef('l.conversationId', '=', 'm.conversationId')
          .where('l.threadRootId', 'is', null)
          .orderBy('l.createdAt', 'desc')
          .orderBy('l.id', 'desc')
          .limit(1),
      ),
    )
    .execute();
}
