import type {
  AccountTable,
  InstanceTable,
  IpBlockTable,
  ServerKeyTable,
  SessionTable,
} from './tables/foundation.js';
import type {
  ConversationMemberTable,
  ConversationTable,
  DmRequestTable,
  DmSettingsTable,
  MessageEditTable,
  MessageTable,
  PinTable,
  ReactionTable,
  UserBlockTable,
  WorkspaceInviteTable,
  WorkspaceMemberTable,
  WorkspaceTable,
} from './tables/collaboration.js';

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
}
