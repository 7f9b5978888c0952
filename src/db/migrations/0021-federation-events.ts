import { sql, SqliteAdapter, type Kysely } from 'kysely';

import { MS } from './helpers.js';

// Events for people of other servers, stored until their relay has them (docs/federation.md,
// "Events"), and the key each key-login challenge was issued under (docs/keys.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  // Host side: one row per event and remote person, in the order recorded. `seq` is the order:
  // dialect-specific, since both databases number rows themselves but spell it differently
  // (SQLite's INTEGER PRIMARY KEY is the rowid, always past the largest row; PostgreSQL's
  // bigserial a sequence). The unique (accountId, eventId) makes an event that several
  // processes record one row.
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  await db.schema
    .createTable('remote_event')
    .addColumn('seq', sqlite ? 'integer' : 'bigserial', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('eventId', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('deliveredAt', MS)
    .addUniqueConstraint('remote_event_event_uq', ['accountId', 'eventId'])
    .execute();
  // A person's undelivered events, oldest first (delivered rows stay a few minutes only).
  await db.schema
    .createIndex('remote_event_pending_idx')
    .on('remote_event')
    .columns(['accountId', 'seq'])
    .where(sql.ref('deliveredAt'), 'is', null)
    .execute();
  await db.schema
    .createIndex('remote_event_created_idx')
    .on('remote_event')
    .column('createdAt')
    .execute();
  // Host side: per remote person, where their events go and when the next attempt may run.
  await db.schema
    .createTable('remote_event_delivery')
    .addColumn('accountId', 'text', (c) =>
      c.primaryKey().references('account.id').onDelete('cascade'),
    )
    .addColumn('relay', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('nextAttemptAt', MS, (c) => c.notNull())
    .addColumn('leasedUntil', MS, (c) => c.notNull())
    .addColumn('lastError', 'text')
    .execute();
  await db.schema
    .createIndex('remote_event_delivery_relay_idx')
    .on('remote_event_delivery')
    .columns(['relay', 'nextAttemptAt'])
    .execute();
  // Relay side: the events a host delivered for a local person, remembered so that a copy sent
  // again (by a retry, or by another process of the host) is not published twice.
  await db.schema
    .createTable('relay_event')
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('hostServerId', 'text', (c) => c.notNull())
    .addColumn('eventId', 'text', (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('relay_event_pk', ['accountId', 'hostServerId', 'eventId'])
    .execute();
  await db.schema
    .createIndex('relay_event_expires_idx')
    .on('relay_event')
    .column('expiresAt')
    .execute();
  // The server key a challenge was issued under, so a statement over a challenge issued just
  // before a rotation still verifies (null: issued before this migration).
  await db.schema.alterTable('key_challenge').addColumn('serverKey', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('key_challenge').dropColumn('serverKey').execute();
  for (const t of ['relay_event', 'remote_event_delivery', 'remote_event']) {
    await db.schema.dropTable(t).execute();
  }
}
