import type { Role } from '../auth/policy.js';
import type {
  ConversationTable,
  DmRequestTable,
  MessageEditTable,
  MessageTable,
} from '../db/tables/collaboration.js';
import type { BusEvent } from '../events/bus.js';
import type { AttachmentPayload } from '../events/catalog.js';
import type { AccountView } from '../services/accounts/account-service.js';
import type { AuditView } from '../services/audit/audit-log.js';
import type { KeybindView } from '../services/commands/keybinds.js';
import type { MacroView } from '../services/commands/macros.js';
import type { PipelineView } from '../services/commands/pipelines.js';
import type { DeviceView } from '../services/devices/device-rules.js';
import type { CustomEmojiView } from '../services/emoji/emoji-service.js';
import type { IpBlockView } from '../services/ip-blocks/ip-block-service.js';
import type { LinkPreviewView } from '../services/link-previews/link-preview-service.js';
import type { PrincipalBlockView } from '../services/moderation/principal-blocks.js';
import type { FeedRow } from '../services/notifications/queries.js';
import type {
  NotificationRuleView,
  NotificationSettingsView,
} from '../services/notifications/views.js';
import type { WorkspacePluginView } from '../services/plugins/plugin-service.js';
import type { InstanceInviteView } from '../services/registration/registration-service.js';
import type { SessionView } from '../services/sessions/session-service.js';
import type { InviteView } from '../services/workspaces/invite-service.js';
import type { WorkspaceView } from '../services/workspaces/workspace-service.js';

// The mapper table of the GraphQL boundary: for an object type, the value its resolvers receive
// as parent and that fields of that type return (a service's view type); for a scalar, the
// values it takes in and gives out; for an enum with internal values (build.ts), those values.
// The generated resolver types (generated/resolver-types.ts, `npm run codegen`) read this table;
// an object type not named here is the plain object its SDL describes.

/**
 * A User as resolvers hand it over. `viewerIsSelf` marks the user of a SessionPayload: the
 * caller who just signed in, before the request carries their session. `listCursor` is the
 * user's place in a list whose items carry their cursor (`blockedUsers`,
 * `Conversation.members`).
 */
export type UserParent = AccountView & { viewerIsSelf?: boolean; listCursor?: string };

/** A forwarded message's origin: the original if the reader may still see it. */
export interface ForwardParent {
  messageId: string;
  original: MessageTable | null;
  createdAt: number;
}

/** Object type -> its parent value (a view a service returns). */
export interface TypeMappers {
  Attachment: AttachmentPayload;
  AuditEntry: AuditView;
  Conversation: ConversationTable;
  CustomEmoji: CustomEmojiView;
  /** `current` is preset where the request's session changed device during the request. */
  Device: DeviceView & { current?: boolean };
  DmRequest: DmRequestTable;
  ForwardedFrom: ForwardParent;
  InstanceInvite: InstanceInviteView;
  IpBlock: IpBlockView;
  Keybind: KeybindView;
  LinkPreview: LinkPreviewView;
  Macro: MacroView;
  Mentions: { userIds: string[]; channelIds: string[]; here: boolean; channel?: boolean };
  Message: MessageTable;
  MessageEdit: MessageEditTable;
  Notification: FeedRow;
  NotificationRule: NotificationRuleView;
  NotificationSettings: NotificationSettingsView;
  Pipeline: PipelineView;
  PrincipalBlock: PrincipalBlockView;
  RelayEvent: BusEvent;
  Session: SessionView;
  User: UserParent;
  Workspace: WorkspaceView;
  WorkspaceEvent: BusEvent;
  WorkspaceInvite: InviteView;
  WorkspacePlugin: WorkspacePluginView;
}

export interface ScalarMappers {
  /** Milliseconds, a Date or an RFC 3339 string out; a Date in. */
  DateTime: { input: Date; output: number | Date | string };
  JSON: { input: unknown; output: unknown };
}

/** Enums whose internal values differ from their names (the services use lower case). */
export interface EnumMappers {
  AuditKind: 'moderation' | 'command';
  ConversationKind: 'channel' | 'direct' | 'group';
  InviteState: 'active' | 'expired' | 'revoked' | 'usedUp';
  PresenceChoice: 'auto' | 'away' | 'invisible';
  PresenceStatus: 'online' | 'away' | 'offline';
  PrincipalKind: 'user' | 'key' | 'server' | 'remote';
  WorkspaceRole: Role;
}
