import type { Database } from './schema.js';

// One owner per table, and per rule (docs/architecture.md, "Who owns what"). Other areas read
// through joins and write only by calling the owner's exported query functions, and ask a rule's
// owner instead of testing its facts themselves. `npm run lint` runs the check
// (scripts/check-table-owners.ts); the type below makes a new table without an owner a type
// error.

/** The area (folder under src/) that writes each table: one line per table. */
export const TABLE_OWNERS = {
  instance: 'services/instance',
  server_key: 'services/instance',
  ip_block: 'services/ip-blocks',
  account: 'services/accounts',
  session: 'services/sessions',
  workspace: 'services/workspaces',
  workspace_member: 'services/workspaces',
  workspace_invite: 'services/workspaces',
  conversation: 'services/conversations',
  conversation_member: 'services/conversations',
  direct_pair: 'services/conversations',
  message: 'services/messages',
  message_edit: 'services/messages',
  reaction: 'services/messages',
  pin: 'services/messages',
  dm_settings: 'services/dm',
  dm_request: 'services/dm',
  user_block: 'services/dm',
  instance_invite: 'services/registration',
  registration_pow_use: 'services/registration',
  password_reset: 'services/accounts',
  key_identity: 'services/devices',
  device: 'services/devices',
  key_challenge: 'services/devices',
  device_link_offer: 'services/devices',
  abuse_report: 'services/moderation',
  principal_block: 'services/moderation',
  audit_log: 'services/audit',
  presence_setting: 'services/presence',
  event_outbox: 'events',
  custom_emoji: 'services/emoji',
  message_search: 'services/search',
  search_backfill: 'services/search',
  search_language: 'services/search',
  attachment: 'services/attachments',
  plugin_bundle: 'services/plugins',
  workspace_plugin: 'services/plugins',
  link_preview: 'services/link-previews',
  command_confirmation: 'services/commands',
  command_reminder: 'services/commands',
  command_macro: 'services/commands',
  command_keybind: 'services/commands',
  command_pipeline: 'services/commands',
  mls_key_package: 'services/mls',
  mls_group: 'services/mls',
  mls_commit: 'services/mls',
  mls_welcome: 'services/mls',
  mls_group_device: 'services/mls',
  mls_message: 'services/mls',
  notification_setting: 'services/notifications',
  notification_rule: 'services/notifications',
  notification: 'services/notifications',
  workspace_notification_policy: 'services/notifications',
  push_subscription: 'services/notifications',
  server_key_log: 'federation',
  s2s_peer: 'federation',
  s2s_nonce: 'federation',
  s2s_outbox: 'federation',
  remote_device: 'federation',
  relay_host: 'federation',
  remote_event: 'federation',
  remote_event_delivery: 'federation',
  relay_event: 'federation',
  import_map: 'data/import',
} as const satisfies Record<keyof Database, string>;

export type TableName = keyof typeof TABLE_OWNERS;

/**
 * Files besides `<area>/queries.ts` that write an area's tables (paths under src/). Channels
 * are conversations of kind channel: their query module (conversations/channel-queries.ts,
 * which channels/ and workspaces/ call) writes conversation rows beside queries.ts; the audit
 * log and password resets each have a module of their own that is their table's only writer.
 */
export const OWNER_FILES: Readonly<Record<string, readonly string[]>> = {
  'services/conversations': ['services/conversations/channel-queries.ts'],
  'services/audit': ['services/audit/audit-log.ts'],
  'services/accounts': ['services/accounts/password-reset.ts'],
  'services/notifications': [
    'services/notifications/digest-queries.ts',
    'services/notifications/push-queries.ts',
  ],
};

/**
 * Writes still inline in a service of the owning area, as `file table`, to move into its
 * queries.ts as those services are split. The check fails when one is gone, so the list only
 * shrinks; nothing may be added.
 */
export const PENDING_MOVES: readonly string[] = [];

/**
 * Files that write every table whole, naming tables from the catalog at run time: the loader
 * restore and move share (a backup's rows, or an instance's read from SQLite), table by table,
 * as the database's own dump and load would (src/data/pg-load.ts). They copy rows verbatim and never decide what a row means, so no
 * owner's rule is bypassed; they are the one exception to the owner map, and the check refuses a
 * write to a table named at run time anywhere else. Readers of every table (backup, verify,
 * export) need no entry: reads are free.
 */
export const WHOLE_DATABASE_WRITERS: readonly string[] = ['data/pg-load.ts'];

/**
 * Rules with one owner, as the files and folders (paths under src/, a folder ending in `/`) that
 * may test their facts directly. Everywhere else asks the owner, so a new rule (a read-only role,
 * a guest allow-list) is one edit:
 * - `role`: a workspace role compared with a role's name (`'guest'`, `'owner'`, ...). Ask
 *   `auth/policy.ts` (`can`, `isGuest`, `atLeast`) or `Authz`; the workspaces area writes roles.
 * - `privacy`: a conversation's `isPrivate` flag compared with 0 or 1. Ask
 *   `conversations/access.ts` (`readStanding`, `canRead`), the one read rule; the conversations
 *   and channels areas write conversations and choose their events' audience.
 */
export const RULE_OWNERS = {
  role: ['auth/policy.ts', 'services/authz/', 'services/workspaces/'],
  privacy: ['services/conversations/', 'services/channels/'],
} as const satisfies Record<string, readonly string[]>;

export type RuleName = keyof typeof RULE_OWNERS;
