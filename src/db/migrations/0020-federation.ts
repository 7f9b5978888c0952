import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// Federation (docs/federation.md): this server's signed key log, the peers it pinned, the nonces
// of signed calls it accepted, its outgoing calls, the device keys relays vouched for, and the
// hosts a local person reached through this relay.
export async function up(db: Kysely<unknown>): Promise<void> {
  // The key log of /.well-known/svc-server: append-only, one row per key, oldest first.
  await db.schema
    .createTable('server_key_log')
    .addColumn('seq', 'integer', (c) => c.primaryKey())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  // A peer's key log as first seen and as followed since (trust on first use).
  await db.schema
    .createTable('s2s_peer')
    .addColumn('serverId', 'text', (c) => c.primaryKey())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('keyLog', 'text', (c) => c.notNull())
    .addColumn('currentKey', 'text', (c) => c.notNull())
    .addColumn('roles', 'text', (c) => c.notNull())
    .addColumn('pinnedAt', MS, (c) => c.notNull())
    .addColumn('refreshedAt', MS, (c) => c.notNull())
    .execute();
  // Nonces of accepted signatures (a peer's RFC 9421 nonce, a device request's nonce), kept
  // until the signature could no longer pass the time window.
  await db.schema
    .createTable('s2s_nonce')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('s2s_nonce_pk', ['scope', 'nonce'])
    .execute();
  await db.schema
    .createIndex('s2s_nonce_expires_idx')
    .on('s2s_nonce')
    .column('expiresAt')
    .execute();
  // Outgoing calls that must reach a peer (revocations): kept until the peer acknowledged.
  await db.schema
    .createTable('s2s_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('serverId', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('nextAttemptAt', MS, (c) => c.notNull())
    .addColumn('lastError', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('s2s_outbox_due_idx')
    .on('s2s_outbox')
    .column('nextAttemptAt')
    .execute();
  // Host side: the device keys a relay vouched for, per person from that relay.
  await db.schema
    .createTable('remote_device')
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('deviceKey', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('revokedAt', MS)
    .addPrimaryKeyConstraint('remote_device_pk', ['accountId', 'deviceKey'])
    .execute();
  // Relay side: the hosts a local person reached, so their revocations reach those hosts.
  await db.schema
    .createTable('relay_host')
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('hostServerId', 'text', (c) => c.notNull())
    .addColumn('firstUsedAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('relay_host_pk', ['accountId', 'hostServerId'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'relay_host',
    'remote_device',
    's2s_outbox',
    's2s_nonce',
    's2s_peer',
    'server_key_log',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
