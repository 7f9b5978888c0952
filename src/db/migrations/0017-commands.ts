import type { Kysely } from 'kysely';

import { MS } from './helpers.js';

// The command system (docs/commands.md): confirmations of destructive runs, reminders set with
// /remind, macros, keybinds and pipelines. Command runs are audited in `audit_log` (kind
// `command`, target `workspace:<id>` or `account:<id>`); the index below serves a workspace's
// command audit page.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('command_confirmation')
    // sha256 of the token, base64url: the token itself is never stored.
    .addColumn('tokenHash', 'text', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull())
    // sha256 over the command, its arguments and the context the confirmation was made for.
    .addColumn('binding', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('expiresAt', MS, (c) => c.notNull())
    .addColumn('usedAt', MS)
    .execute();
  await db.schema
    .createIndex('command_confirmation_expiry_idx')
    .on('command_confirmation')
    .column('expiresAt')
    .execute();

  await db.schema
    .createTable('command_reminder')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('accountId', 'text', (c) => c.notNull().references('account.id').onDelete('cascade'))
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('conversationId', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('dueAt', MS, (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('command_reminder_due_idx')
    .on('command_reminder')
    .columns(['dueAt', 'id'])
    .execute();

  // A macro belongs to a workspace (ownerId null, `macro:manage`) or to one person
  // (workspaceId null): personal macros follow their owner into every workspace.
  await db.schema
    .createTable('command_macro')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspaceId', 'text', (c) => c.references('workspace.id').onDelete('cascade'))
    .addColumn('ownerId', 'text', (c) => c.references('account.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('createdBy', 'text')
    .addColumn('createdAt', MS, (c) => c.notNull())
    .addColumn('updatedAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('command_macro_workspace_idx')
    .on('command_macro')
    .columns(['workspaceId', 'name'])
    .execute();
  await db.schema
    .createIndex('command_macro_owner_idx')
    .on('command_macro')
    .columns(['ownerId', 'name'])
    .execute();

  // Keybinds: a person's (ownerId) or a workspace's defaults (workspaceId); one of the two.
  await db.schema
    .createTable('command_keybind')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspaceId', 'text', (c) => c.references('workspace.id').onDelete('cascade'))
    .addColumn('ownerId', 'text', (c) => c.references('account.id').onDelete('cascade'))
    .addColumn('chord', 'text', (c) => c.notNull())
    .addColumn('command', 'text')
    .addColumn('macroId', 'text')
    .addColumn('args', 'text', (c) => c.notNull())
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('command_keybind_workspace_idx')
    .on('command_keybind')
    .columns(['workspaceId', 'chord'])
    .execute();
  await db.schema
    .createIndex('command_keybind_owner_idx')
    .on('command_keybind')
    .columns(['ownerId', 'chord'])
    .execute();

  await db.schema
    .createTable('command_pipeline')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspaceId', 'text', (c) =>
      c.notNull().references('workspace.id').onDelete('cascade'),
    )
    .addColumn('ownerId', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('nextRunAt', MS)
    .addColumn('windowStart', MS, (c) => c.notNull())
    .addColumn('windowRuns', 'integer', (c) => c.notNull())
    .addColumn('stoppedReason', 'text')
    .addColumn('lastRunAt', MS)
    .addColumn('createdAt', MS, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('command_pipeline_workspace_idx')
    .on('command_pipeline')
    .columns(['workspaceId', 'createdAt'])
    .execute();
  await db.schema
    .createIndex('command_pipeline_next_idx')
    .on('command_pipeline')
    .column('nextRunAt')
    .execute();

  // A workspace's command audit page (moderators), newest first.
  await db.schema
    .createIndex('audit_log_target_time_idx')
    .on('audit_log')
    .columns(['target', 'createdAt', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
