import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('key_identity')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('publicKey', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('retiredAt', MS)
    .addColumn('replacedBy', 'text')
    .execute();
  await db.schema
    .createIndex('key_identity_account_idx')
    .on('key_identity')
    .column('accountId')
    .execute();

  await db.schema
    .createTable('device')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('publicKey', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('lastUsedAt', MS)
    .addColumn('revokedAt', MS)
    .addColumn('keyPackage', 'text')
    .addColumn('keyPackageAt', MS)
    .execute();
  await db.schema
    .createIndex('device_account_idx')
    .on('device')
    .columns(['accountId', 'createdAt'])
    .execute();

  await db.schema
    .createTable('key_challenge')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addColumn('usedAt', MS)
    .execute();
  await db.schema
    .createIndex('key_challenge_expires_idx')
    .on('key_challenge')
    .column('expiresAt')
    .execute();

  await db.schema
    .createTable('device_link_offer')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('publicKey', 'text', (c) => c.notNull())
    .addColumn('deviceName', 'text', (c) => c.notNull())
    .addColumn('codeHash', 'text', (c) => c.notNull())
    .addColumn('secretHash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('failedAttempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addColumn('resolvedAt', MS)
    .addColumn('deviceId', 'text')
    .execute();
  await db.schema
    .createIndex('device_link_offer_account_idx')
    .on('device_link_offer')
    .columns(['accountId', 'state', 'expiresAt'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
