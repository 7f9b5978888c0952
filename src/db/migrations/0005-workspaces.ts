import { sql, type Kysely } from 'kysely';

// Indexes for the workspace lists (members, invites) and the one-name-per-channel rule. The
// tables themselves are in 0002-collaboration.

export async function up(db: Kysely<unknown>): Promise<void> {
  // Workspace.members pages over (joinedAt, accountId).
  await db.schema
    .createIndex('workspace_member_joined_idx')
    .on('workspace_member')
    .columns(['workspaceId', 'joinedAt', 'accountId'])
    .execute();
  // A workspace's invites, newest first.
  await db.schema
    .createIndex('workspace_invite_workspace_idx')
    .on('workspace_invite')
    .columns(['workspaceId', 'createdAt'])
    .execute();
  // Channel names are unique within a workspace (names are stored lower-case). Partial, so
  // direct and group conversations (whose names are free) are left out; both dialects support it.
  await db.schema
    .createIndex('conversation_channel_name_uq')
    .on('conversation')
    .columns(['workspaceId', 'name'])
    .unique()
    .where(sql.ref('kind'), '=', 'channel')
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
