import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// What each user chose to show (auto, away, invisible). Connections and activity live in memory
// or Redis and are never stored.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('presence_setting')
    .addColumn('accountId', 'text', (c) =>
      c.primaryKey().references('account.id').onDelete('cascade'),
    )
    .addColumn('choice', 'text', (c) => c.notNull())
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('presence_setting').execute();
}
