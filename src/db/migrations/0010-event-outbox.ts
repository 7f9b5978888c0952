import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// The transactional outbox of events (docs/events.md, "Delivery"): a row is written in the
// transaction that raised the event and removed once the event is on the bus.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('at', MS, (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('origin', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  // The drainer's scan: oldest first.
  await db.schema
    .createIndex('event_outbox_created_idx')
    .on('event_outbox')
    .columns(['createdAt', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('event_outbox').execute();
}
