import type { AccountDeletionService } from './account-deletion/account-deletion-service.js';
import type { AccountService } from './accounts/account-service.js';
import type { AttachmentService } from './attachments/attachment-service.js';
import type { Authz } from './authz/authz.js';
import type { Avatars } from './accounts/avatars.js';
import type { ChannelService } from './channels/channel-service.js';
import type { CommandSystem } from './commands/command-system.js';
import type { ConversationService } from './conversations/conversation-service.js';
import type { DataExportService } from './data-export/data-export-service.js';
import type { DeviceService } from './devices/device-service.js';
import type { DigestMailer } from './notifications/digest.js';
import type { DmService } from './dm/dm-service.js';
import type { EmojiService } from './emoji/emoji-service.js';
import type { FileStorage } from './files/file-storage.js';
import type { InviteService } from './workspaces/invite-service.js';
import type { IpBlockService } from './ip-blocks/ip-block-service.js';
import type { KeyAuthService } from './devices/key-auth-service.js';
import type { LinkPreviewService } from './link-previews/link-preview-service.js';
import type { MessageService } from './messages/message-service.js';
import type { MlsService } from './mls/mls-service.js';
import type { ModerationService } from './moderation/moderation-service.js';
import type { NotificationService } from './notifications/notification-service.js';
import type { PasswordResetService } from './accounts/password-reset.js';
import type { PluginService } from './plugins/plugin-service.js';
import type { PresenceService } from './presence/presence-service.js';
import type { RealtimeService } from './realtime/realtime-service.js';
import type { RegistrationService } from './registration/registration-service.js';
import type { SearchService } from './search/search-service.js';
import type { SessionService } from './sessions/session-service.js';
import type { SignupPolicy } from './registration/signup-policy.js';
import type { TypingService } from './presence/typing-service.js';
import type { WebPush } from './notifications/push.js';
import type { WorkspaceService } from './workspaces/workspace-service.js';

/** Every service, built once by the composition root (context.ts) in dependency order. */
export interface Services {
  /** Who may do what: the action catalogue over workspace roles, memoised per request. */
  authz: Authz;
  accounts: AccountService;
  sessions: SessionService;
  ipBlocks: IpBlockService;
  /** Abuse reports, principal blocks, the audit log (docs/moderation.md). */
  moderation: ModerationService;
  /** The rules both signups share (registration, terms, invites, default workspace). */
  signup: SignupPolicy;
  registration: RegistrationService;
  passwordResets: PasswordResetService;
  workspaces: WorkspaceService;
  invites: InviteService;
  channels: ChannelService;
  /** Devices, device links, key packages (hasEncryptionDevice). */
  devices: DeviceService;
  /** Key login and signup, identity enrolment and rotation. */
  keyAuth: KeyAuthService;
  accountDeletion: AccountDeletionService;
  /** Direct and group conversations, invitations, the inbox (docs/direct-messages.md). */
  conversations: ConversationService;
  /** Messages, reactions, pins, read markers, the message rate (docs/messages.md). */
  messages: MessageService;
  /** DM settings, requests and blocks. */
  dm: DmService;
  /** Online, away, offline across processes (docs/realtime.md). */
  presence: PresenceService;
  /** Typing indicators for direct conversations. */
  typing: TypingService;
  /** The subscriptions' streams, authorized once at subscribe (docs/realtime.md). */
  realtime: RealtimeService;
  /** The blob store under SVC_DATA_DIR and the sources that keep blobs alive (docs/files.md). */
  files: FileStorage;
  /** Avatar images, re-encoded into the blob store (docs/files.md, "Avatars"). */
  avatars: Avatars;
  /** Custom emoji of workspaces, behind `custom_emoji` (docs/files.md, "Custom emoji"). */
  emoji: EmojiService;
  /** Message search and people and places search (docs/search.md). */
  search: SearchService;
  /** Attachments: upload tokens, uploads, finalizing, downloads (docs/files.md). */
  attachments: AttachmentService;
  /** Workspace plugins: bundles, the registry, contributions (docs/plugins.md). */
  plugins: PluginService;
  /** Link previews of new and edited messages (docs/link-previews.md). */
  linkPreviews: LinkPreviewService;
  /** Commands, macros, keybinds, pipelines and reminders (docs/commands.md). */
  commands: CommandSystem;
  /** The MLS delivery service of encrypted conversations (docs/e2ee.md). */
  mls: MlsService;
  /** Mentions, rules, the notification feed and its fan-out (docs/notifications.md). */
  notifications: NotificationService;
  /** Mail digests of unread notifications, behind `email` (docs/notifications.md). */
  digests: DigestMailer;
  /** Web Push subscriptions and delivery (docs/notifications.md, "Web Push"). */
  webPush: WebPush;
  /** A person's download of their own data, made in the background (docs/export.md). */
  dataExports: DataExportService;
}
