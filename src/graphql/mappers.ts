import type { Role } from '../auth/policy.js';
import type { BusEvent } from '../events/bus.js';
import type { AttachmentPayload } from '../events/catalog.js';
import type { AccountView } from '../services/accounts/index.js';
import type { AuditView } from '../services/audit/index.js';
import type { KeybindView, MacroView, PipelineView } from '../services/commands/index.js';
import type { ConversationView } from '../services/conversations/index.js';
import type { DeviceView } from '../services/devices/index.js';
import type { DmRequestView } from '../services/dm/index.js';
import type { CustomEmojiView } from '../services/emoji/index.js';
import type { IpBlockView } from '../services/ip-blocks/index.js';
import type { LinkPreviewView } from '../services/link-previews/index.js';
import type { MessageEditView, MessageView } from '../services/messages/index.js';
import type { PrincipalBlockView } from '../services/moderation/index.js';
import type {
  FeedRow,
  NotificationRuleView,
  NotificationSettingsView,
} from '../services/notifications/index.js';
import type { WorkspacePluginView } from '../services/plugins/index.js';
import type { InstanceInviteView } from '../services/registration/index.js';
import type { SessionView } from '../services/sessions/index.js';
import type { InviteView, WorkspaceView } from '../services/workspaces/index.js';

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
  original: MessageView | null;
  createdAt: number;
}

/** Object type -> its parent value (a view a service returns). */
export interface TypeMappers {
  Attachment: AttachmentPayload;
  AuditEntry: AuditView;
  Conversation: ConversationView;
  CustomEmoji: CustomEmojiView;
  /** `current` is preset where the request's session changed device during the request. */
  Device: DeviceView & { current?: boolean };
  DmRequest: DmRequestView;
  ForwardedFrom: ForwardParent;
  InstanceInvite: InstanceInviteView;
  IpBlock: IpBlockView;
  Keybind: KeybindView;
  LinkPreview: LinkPreviewView;
  Macro: MacroView;
  Mentions: { userIds: string[]; channelIds: string[]; here: boolean; channel?: boolean };
  Message: MessageView;
  MessageEdit: MessageEditView;
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
