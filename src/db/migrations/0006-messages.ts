import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One DIRECT conversation per pair of people (and encryption mode); see tables/messages.ts.
  await db.schema
    .createTable('direct_pair')
    .addColumn('pairKey', 'text', (c) => c.primaryKey())
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .execute();

  // Pins of a conversation, newest first.
  await db.schema
    .createIndex('pin_conversation_time_idx')
    .on('pin')
    .columns(['conversationId', 'pinnedAt'])
    .execute();

  // Pending DM requests between two people, and a blocker's list.
  await db.schema
    .createIndex('dm_request_conversation_idx')
    .on('dm_request')
    .columns(['conversationId', 'state'])
    .execute();
  await db.schema
    .createIndex('user_block_blocked_idx')
    .on('user_block')
    .columns(['blockedId', 'blockerId'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
