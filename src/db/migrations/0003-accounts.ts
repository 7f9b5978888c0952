import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('instance_invite')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tokenHash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text')
    .addColumn('emailKey', 'text')
    .addColumn('createdBy', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS)
    .addColumn('maxUses', 'integer', (c) => c.notNull())
    .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revokedAt', MS)
    .execute();

  await db.schema
    .createTable('registration_pow_use')
    .addColumn('salt', 'text', (c) => c.primaryKey())
    .addColumn('usedAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('registration_pow_use_expires_idx')
    .on('registration_pow_use')
    .column('expiresAt')
    .execute();

  await db.schema
    .createTable('password_reset')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tokenHash', 'text', (c) => c.notNull().unique())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addColumn('usedAt', MS)
    .execute();
  await db.schema
    .createIndex('password_reset_account_idx')
    .on('password_reset')
    .column('accountId')
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
