import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('instance')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('server_key')
    .addColumn('kind', 'text', (c) => c.primaryKey())
    .addColumn('privateKey', 'text', (c) => c.notNull())
    .addColumn('publicKey', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ip_block')
    .addColumn('cidr', 'text', (c) => c.primaryKey())
    .addColumn('reason', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS)
    .addColumn('createdBy', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('account')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('usernameKey', 'text', (c) => c.notNull().unique())
    .addColumn('displayName', 'text')
    .addColumn('email', 'text')
    .addColumn('emailKey', 'text', (c) => c.unique())
    .addColumn('passwordHash', 'text')
    .addColumn('keyIdentityId', 'text')
    .addColumn('homeServer', 'text')
    .addColumn('isOperator', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('avatarPath', 'text')
    .addColumn('acceptedTermsUrl', 'text')
    .addColumn('acceptedTermsAt', MS)
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('deletionRequestedAt', MS)
    .addColumn('deletionScheduledFor', MS)
    .addColumn('deletedAt', MS)
    .execute();
  await db.schema
    .createIndex('account_key_identity_idx')
    .on('account')
    .column('keyIdentityId')
    .execute();

  await db.schema
    .createTable('session')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tokenHash', 'text', (c) => c.notNull().unique())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('deviceId', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addColumn('endedAt', MS)
    .addColumn('endReason', 'text')
    .addColumn('ip', 'text')
    .addColumn('userAgent', 'text')
    .execute();
  await db.schema.createIndex('session_account_idx').on('session').column('accountId').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
