import type { Kysely } from 'kysely';

// Searching a common word walks messages newest first across the caller's conversations and
// checks each one's terms, stopping at the page (docs/search.md, "Scale"); this index is that
// walk's order. Building it reads every message once (on PostgreSQL it holds writes to
// `message` meanwhile: seconds for a million messages).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('message_time_idx')
    .on('message')
    .columns(['createdAt', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
