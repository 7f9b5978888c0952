import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// The MLS delivery service (docs/e2ee.md): key packages of devices, one group per encrypted
// conversation with its incarnation and epoch, the ordered Commits and the Welcomes, the group's
// devices as committers declared them, and the franking data of encrypted messages.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mls_key_package')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('deviceId', 'text', (c) => c.notNull().references('device.id').onDelete('cascade'))
    .addColumn('accountId', 'text', (c) => c.notNull())
    /** The MLSMessage (wire format mls_key_package), base64url. */
    .addColumn('keyPackage', 'text', (c) => c.notNull())
    /** SHA-256 of the bytes, base64url: the same package is stored once per device. */
    .addColumn('hash', 'text', (c) => c.notNull())
    /** The KeyPackageRef (RFC 9420, 5.2), base64url: how a Welcome names the package. */
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('lastResort', 'integer', (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('claimedAt', MS)
    .addColumn('claimedBy', 'text')
    .execute();
  await db.schema
    .createIndex('mls_key_package_hash_idx')
    .on('mls_key_package')
    .columns(['deviceId', 'hash'])
    .unique()
    .execute();
  await db.schema
    .createIndex('mls_key_package_ref_idx')
    .on('mls_key_package')
    .column('ref')
    .execute();
  await db.schema
    .createIndex('mls_key_package_claim_idx')
    .on('mls_key_package')
    .columns(['deviceId', 'lastResort', 'claimedAt', 'createdAt'])
    .execute();

  await db.schema
    .createTable('mls_group')
    .addColumn('conversationId', 'text', (c) =>
      c.primaryKey().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('incarnation', 'integer', (c) => c.notNull())
    .addColumn('epoch', MS, (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('mls_commit')
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('incarnation', 'integer', (c) => c.notNull())
    /** The epoch the Commit was made in; the group is at epoch + 1 after it. */
    .addColumn('epoch', MS, (c) => c.notNull())
    .addColumn('commit', 'text', (c) => c.notNull())
    .addColumn('senderId', 'text', (c) => c.notNull())
    .addColumn('senderDeviceId', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    // One Commit per epoch: of two committers racing, the second insert fails.
    .addPrimaryKeyConstraint('mls_commit_pk', ['conversationId', 'incarnation', 'epoch'])
    .execute();

  await db.schema
    .createTable('mls_welcome')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('deviceId', 'text', (c) => c.notNull().references('device.id').onDelete('cascade'))
    .addColumn('incarnation', 'integer', (c) => c.notNull())
    /** The epoch the Welcome joins the group at. */
    .addColumn('epoch', MS, (c) => c.notNull())
    .addColumn('welcome', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('mls_welcome_device_idx')
    .on('mls_welcome')
    .columns(['deviceId', 'id'])
    .execute();

  // No foreign key to device or account: a purged account's devices must stay listed here
  // until a Commit removes them (MLS_COMMIT_REQUIRED, pendingRemovals).
  await db.schema
    .createTable('mls_group_device')
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('deviceId', 'text', (c) => c.notNull())
    .addColumn('accountId', 'text', (c) => c.notNull())
    .addColumn('addedAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('mls_group_device_pk', ['conversationId', 'deviceId'])
    .execute();

  await db.schema
    .createTable('mls_message')
    .addColumn('messageId', 'text', (c) =>
      c.primaryKey().references('message.id').onDelete('cascade'),
    )
    .addColumn('incarnation', 'integer', (c) => c.notNull())
    .addColumn('epoch', MS, (c) => c.notNull())
    .addColumn('senderDeviceId', 'text')
    /** The sender's commitment to the plaintext, base64url (32 bytes). */
    .addColumn('frankingCommitment', 'text', (c) => c.notNull())
    /** The server's HMAC over commitment, sender, conversation and time, base64url. */
    .addColumn('frankingTag', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'mls_message',
    'mls_group_device',
    'mls_welcome',
    'mls_commit',
    'mls_group',
    'mls_key_package',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
