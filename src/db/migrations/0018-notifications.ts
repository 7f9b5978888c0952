import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// Notifications (docs/notifications.md): each person's settings, their scoped rules, the feed,
// the channel-wide mention policy of a workspace, and Web Push subscriptions.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per person who changed anything; a person without one has the defaults.
  await db.schema
    .createTable('notification_setting')
    .addColumn('accountId', 'text', (c) =>
      c.primaryKey().references('account.id').onDelete('cascade'),
    )
    .addColumn('level', 'text', (c) => c.notNull())
    /** JSON array of lower-case keywords; '[]' when none. */
    .addColumn('keywords', 'text', (c) => c.notNull())
    .addColumn('timeZone', 'text', (c) => c.notNull())
    /** Minutes after local midnight; both null when there are no quiet hours. */
    .addColumn('quietStart', 'integer')
    .addColumn('quietEnd', 'integer')
    .addColumn('dndUntil', MS)
    .addColumn('emailDigests', 'integer', (c) => c.notNull())
    .addColumn('lastDigestAt', MS)
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .execute();

  // A workspace- or conversation-scoped override: `scopeId` is the workspace or conversation id.
  await db.schema
    .createTable('notification_rule')
    .addColumn('scopeId', 'text', (c) => c.notNull())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    /** Null for a workspace rule. */
    .addColumn('conversationId', 'text', (c) => c.references('conversation.id').onDelete('cascade'))
    /** Null: the level comes from the wider scope. */
    .addColumn('level', 'text')
    .addColumn('mutedUntil', MS)
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_rule_pk', ['scopeId', 'accountId'])
    .execute();
  await db.schema
    .createIndex('notification_rule_account_idx')
    .on('notification_rule')
    .column('accountId')
    .execute();
  await db.schema
    .createIndex('notification_rule_workspace_idx')
    .on('notification_rule')
    .column('workspaceId')
    .execute();

  // The feed. `createdAt` is the message's time, so the feed and the read marker compare alike.
  await db.schema
    .createTable('notification')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('messageId', 'text', (c) => c.notNull().references('message.id').onDelete('cascade'))
    .addColumn('conversationId', 'text', (c) =>
      c.notNull().references('conversation.id').onDelete('cascade'),
    )
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('threadRootId', 'text')
    .addColumn('actorId', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('readAt', MS)
    .addColumn('mailedAt', MS)
    .execute();
  await db.schema
    .createIndex('notification_feed_idx')
    .on('notification')
    .columns(['accountId', 'createdAt', 'id'])
    .execute();
  await db.schema
    .createIndex('notification_conversation_idx')
    .on('notification')
    .columns(['accountId', 'conversationId', 'readAt'])
    .execute();
  await db.schema
    .createIndex('notification_message_idx')
    .on('notification')
    .column('messageId')
    .execute();
  await db.schema
    .createIndex('notification_workspace_idx')
    .on('notification')
    .column('workspaceId')
    .execute();
  // Retention removes the oldest.
  await db.schema
    .createIndex('notification_time_idx')
    .on('notification')
    .column('createdAt')
    .execute();
  // The digest job looks for unmailed, unread notifications by time.
  await db.schema
    .createIndex('notification_digest_idx')
    .on('notification')
    .columns(['mailedAt', 'readAt', 'createdAt'])
    .execute();

  // Who may use @channel and @here in a workspace's channels; no row: everyone.
  await db.schema
    .createTable('workspace_notification_policy')
    .addColumn('workspaceId', 'text', (c) =>
      c.primaryKey().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('channelMentions', 'text', (c) => c.notNull())
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('push_subscription')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('p256dh', 'text', (c) => c.notNull())
    .addColumn('auth', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('lastSuccessAt', MS)
    .execute();
  await db.schema
    .createIndex('push_subscription_endpoint_idx')
    .on('push_subscription')
    .column('endpoint')
    .unique()
    .execute();
  await db.schema
    .createIndex('push_subscription_account_idx')
    .on('push_subscription')
    .column('accountId')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('push_subscription').execute();
  await db.schema.dropTable('workspace_notification_policy').execute();
  await db.schema.dropTable('notification').execute();
  await db.schema.dropTable('notification_rule').execute();
  await db.schema.dropTable('notification_setting').execute();
}
