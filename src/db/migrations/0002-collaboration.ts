import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

/** The id of the one direct space, which holds every direct and group conversation. */
export const DIRECT_SPACE_ID = '00000000-0000-7000-8000-000000000000';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspace')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('ownerId', 'text')
    .addColumn('isDirect', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('workspace_owner_idx').on('workspace').column('ownerId').execute();

  await db.schema
    .createTable('workspace_member')
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('joinedAt', MS, (c) => c.notNull())
    .addColumn('timedOutUntil', MS)
    .addPrimaryKeyConstraint('workspace_member_pk', ['workspaceId', 'accountId'])
    .execute();
  await db.schema
    .createIndex('workspace_member_account_idx')
    .on('workspace_member')
    .columns(['accountId', 'workspaceId'])
    .execute();

  await db.schema
    .createTable('conversation')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('topic', 'text')
    .addColumn('isPrivate', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('encrypted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('archivedAt', MS)
    .addColumn('createdBy', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('lastActivityAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('conversation_workspace_idx')
    .on('conversation')
    .columns(['workspaceId', 'kind'])
    .execute();

  await db.schema
    .createTable('conversation_member')
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('member'))
    .addColumn('joinedAt', MS, (c) => c.notNull())
    .addColumn('lastReadAt', MS)
    .addColumn('lastReadMessageId', 'text')
    .addPrimaryKeyConstraint('conversation_member_pk', ['conversationId', 'accountId'])
    .execute();
  await db.schema
    .createIndex('conversation_member_account_idx')
    .on('conversation_member')
    .columns(['accountId', 'conversationId'])
    .execute();

  await db.schema
    .createTable('workspace_invite')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('tokenHash', 'text', (c) => c.notNull().unique())
    .addColumn('createdBy', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS)
    .addColumn('maxUses', 'integer')
    .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('revokedAt', MS)
    .addColumn('email', 'text')
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('member'))
    .addColumn('guestChannelIds', 'text')
    .execute();
  await db.schema
    .createIndex('workspace_invite_creator_idx')
    .on('workspace_invite')
    .columns(['createdBy', 'createdAt'])
    .execute();

  await db.schema
    .createTable('message')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('workspaceId', 'text', (c) => c.notNull())
    .addColumn('authorId', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    .addColumn('ciphertext', 'text')
    .addColumn('threadRootId', 'text')
    .addColumn('forwardedFromId', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('editedAt', MS)
    .addColumn('deletedAt', MS)
    .addColumn('deletedBy', 'text')
    .addColumn('replyCount', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lastReplyAt', MS)
    .addColumn('mentions', 'text')
    .execute();
  // Pages of a conversation and of a thread are keyset scans over (createdAt, id).
  await db.schema
    .createIndex('message_conversation_time_idx')
    .on('message')
    .columns(['conversationId', 'createdAt', 'id'])
    .execute();
  await db.schema
    .createIndex('message_thread_time_idx')
    .on('message')
    .columns(['threadRootId', 'createdAt', 'id'])
    .execute();
  await db.schema
    .createIndex('message_author_idx')
    .on('message')
    .columns(['authorId', 'createdAt'])
    .execute();

  await db.schema
    .createTable('message_edit')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('messageId', 'text', (c) => c.notNull().references('message.id').onDelete('cascade'))
    .addColumn('previousText', 'text', (c) => c.notNull())
    .addColumn('editedAt', MS, (c) => c.notNull())
    .addColumn('editorId', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('message_edit_message_idx')
    .on('message_edit')
    .columns(['messageId', 'editedAt'])
    .execute();

  await db.schema
    .createTable('reaction')
    .addColumn('messageId', 'text', (c) => c.notNull().references('message.id').onDelete('cascade'))
    .addColumn('accountId', 'text', (c) => c.notNull())
    .addColumn('emoji', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('reaction_pk', ['messageId', 'accountId', 'emoji'])
    .execute();

  await db.schema
    .createTable('pin')
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('messageId', 'text', (c) => c.notNull().references('message.id').onDelete('cascade'))
    .addColumn('pinnedBy', 'text', (c) => c.notNull())
    .addColumn('pinnedAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('pin_pk', ['conversationId', 'messageId'])
    .execute();

  await db.schema
    .createTable('dm_settings')
    .addColumn('accountId', 'text', (c) =>
      c.primaryKey().references('account.id').onDelete('cascade'),
    )
    .addColumn('inbound', 'text', (c) => c.notNull())
    .addColumn('outbound', 'text', (c) => c.notNull())
    .addColumn('partners', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dm_request')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('fromId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('toId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('respondedAt', MS)
    .execute();
  await db.schema
    .createIndex('dm_request_from_idx')
    .on('dm_request')
    .columns(['fromId', 'createdAt'])
    .execute();
  await db.schema
    .createIndex('dm_request_to_idx')
    .on('dm_request')
    .columns(['toId', 'state'])
    .execute();

  await db.schema
    .createTable('user_block')
    .addColumn('blockerId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('blockedId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('user_block_pk', ['blockerId', 'blockedId'])
    .execute();

  // The direct space exists from the start: every account has it without joining.
  const now = Date.now();
  await (
    db as Kysely<{
      workspace: {
        id: string;
        name: string;
        description: string | null;
        ownerId: string | null;
        isDirect: number;
        createdAt: number;
        updatedAt: number;
      };
    }>
  )
    .insertInto('workspace')
    .values({
      id: DIRECT_SPACE_ID,
      name: 'Direct messages',
      description: null,
      ownerId: null,
      isDirect: 1,
      createdAt: now,
      updatedAt: now,
    })
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
