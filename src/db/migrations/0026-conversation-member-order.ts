import type { Kysely } from 'kysely';

// A conversation's member list (services/conversations/member-lists.ts) is read in the order
// people joined: members (or live invitations) of each conversation by (joinedAt, accountId),
// past a cursor. The primary key (conversationId, accountId) found a conversation's rows but
// sorted all of them for every page and read past the cursor by filtering: a page of a channel
// of 20,000 sorted 20,000 rows. This index holds them in the list's order, state first (every
// read names one), so a page is a range of it, and the pending invitations of a page of
// conversations are ranges of it instead of a scan (docs/decisions.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('conversation_member_order_idx')
    .on('conversation_member')
    .columns(['conversationId', 'state', 'joinedAt', 'accountId'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('conversation_member_order_idx').execute();
}
