import { sql, type Kysely } from 'kysely';

// The people who want more than mentions (level `all`, or keywords), found per message in a
// channel (services/notifications/queries.ts, `membersWantingMore`): a partial index holds just
// them, so each message reads those few and checks their membership, instead of reading every
// member of the conversation to look up their settings.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('notification_setting_wants_more_idx')
    .on('notification_setting')
    .column('accountId')
    .where(sql<boolean>`"level" = 'all' or "keywords" <> '[]'`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('notification_setting_wants_more_idx').execute();
}
