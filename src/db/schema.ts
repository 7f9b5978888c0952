import type { AccountTable, PasswordResetTable } from './tables/accounts.js';
import type { InstanceTable, ServerKeyTable } from './tables/instance.js';
import type { IpBlockTable } from './tables/ip-blocks.js';
import type { SessionTable } from './tables/sessions.js';
import type {
  ConversationMemberTable,
  ConversationTable,
  DirectPairTable,
} from './tables/conversations.js';
import type { DmRequestTable, DmSettingsTable, UserBlockTable } from './tables/dm.js';
import type { MessageEditTable, MessageTable, PinTable, ReactionTable } from './tables/messages.js';
import type {
  WorkspaceInviteTable,
  WorkspaceMemberTable,
  WorkspaceTable,
} from './tables/workspaces.js';
import type { InstanceInviteTable, RegistrationPowUseTable } from './tables/registration.js';
import type {
  DeviceLinkOfferTable,
  DeviceTable,
  KeyChallengeTable,
  KeyIdentityTable,
} from './tables/devices.js';
import type { ImportMapTable } from './tables/import.js';
import type { AuditLogTable } from './tables/audit.js';
import type { AbuseReportTable, PrincipalBlockTable } from './tables/moderation.js';
import type { PresenceSettingTable } from './tables/presence.js';
import type { EventOutboxTable } from './tables/events.js';
import type { CustomEmojiTable } from './tables/emoji.js';
import type {
  MessageSearchTable,
  SearchBackfillTable,
  SearchLanguageTable,
} from './tables/search.js';
import type { AttachmentTable } from './tables/attachments.js';
import type { PluginBundleTable, WorkspacePluginTable } from './tables/plugins.js';
import type { LinkPreviewTable } from './tables/link-previews.js';
import type {
  CommandConfirmationTable,
  CommandKeybindTable,
  CommandMacroTable,
  CommandPipelineTable,
  CommandReminderTable,
} from './tables/commands.js';
import type {
  MlsCommitTable,
  MlsGroupDeviceTable,
  MlsGroupTable,
  MlsKeyPackageTable,
  MlsMessageTable,
  MlsWelcomeTable,
} from './tables/mls.js';
import type {
  NotificationRuleTable,
  NotificationSettingTable,
  NotificationTable,
  PushSubscriptionTable,
  WorkspaceNotificationPolicyTable,
} from './tables/notifications.js';
import type {
  RelayEventTable,
  RelayHostTable,
  RemoteDeviceTable,
  RemoteEventDeliveryTable,
  RemoteEventTable,
  S2sNonceTable,
  S2sOutboxTable,
  S2sPeerTable,
  ServerKeyLogTable,
} from './tables/federation.js';
/** Every table, by name. Each area adds its tables in `tables/<area>.ts` and lists them here. */
export interface Database {
  instance: InstanceTable;
  server_key: ServerKeyTable;
  ip_block: IpBlockTable;
  account: AccountTable;
  session: SessionTable;
  workspace: WorkspaceTable;
  workspace_member: WorkspaceMemberTable;
  conversation: ConversationTable;
  conversation_member: ConversationMemberTable;
  workspace_invite: WorkspaceInviteTable;
  message: MessageTable;
  message_edit: MessageEditTable;
  reaction: ReactionTable;
  pin: PinTable;
  dm_settings: DmSettingsTable;
  dm_request: DmRequestTable;
  user_block: UserBlockTable;
  instance_invite: InstanceInviteTable;
  registration_pow_use: RegistrationPowUseTable;
  password_reset: PasswordResetTable;
  key_identity: KeyIdentityTable;
  device: DeviceTable;
  key_challenge: KeyChallengeTable;
  device_link_offer: DeviceLinkOfferTable;
  direct_pair: DirectPairTable;
  abuse_report: AbuseReportTable;
  principal_block: PrincipalBlockTable;
  audit_log: AuditLogTable;
  presence_setting: PresenceSettingTable;
  event_outbox: EventOutboxTable;
  custom_emoji: CustomEmojiTable;
  message_search: MessageSearchTable;
  search_backfill: SearchBackfillTable;
  search_language: SearchLanguageTable;
  import_map: ImportMapTable;
  attachment: AttachmentTable;
  plugin_bundle: PluginBundleTable;
  workspace_plugin: WorkspacePluginTable;
  link_preview: LinkPreviewTable;
  command_confirmation: CommandConfirmationTable;
  command_reminder: CommandReminderTable;
  command_macro: CommandMacroTable;
  command_keybind: CommandKeybindTable;
  command_pipeline: CommandPipelineTable;
  mls_key_package: MlsKeyPackageTable;
  mls_group: MlsGroupTable;
  mls_commit: MlsCommitTable;
  mls_welcome: MlsWelcomeTable;
  mls_group_device: MlsGroupDeviceTable;
  mls_message: MlsMessageTable;
  notification_setting: NotificationSettingTable;
  notification_rule: NotificationRuleTable;
  notification: NotificationTable;
  workspace_notification_policy: WorkspaceNotificationPolicyTable;
  push_subscription: PushSubscriptionTable;
  server_key_log: ServerKeyLogTable;
  s2s_peer: S2sPeerTable;
  s2s_nonce: S2sNonceTable;
  s2s_outbox: S2sOutboxTable;
  remote_device: RemoteDeviceTable;
  relay_host: RelayHostTable;
  remote_event: RemoteEventTable;
  remote_event_delivery: RemoteEventDeliveryTable;
  relay_event: RelayEventTable;
}
