import type { AccountDeletionService } from './account-deletion/index.js';
import type { AccountService, Avatars, PasswordResetService } from './accounts/index.js';
import type { AttachmentService } from './attachments/index.js';
import type { Authz } from './authz/index.js';
import type { ChannelService } from './channels/index.js';
import type { CommandSystem } from './commands/index.js';
import type { ConversationService } from './conversations/index.js';
import type { DataExportService } from './data-export/index.js';
import type { DeviceService, KeyAuthService } from './devices/index.js';
import type { DigestMailer, NotificationService, WebPush } from './notifications/index.js';
import type { DmService } from './dm/index.js';
import type { EmojiService } from './emoji/index.js';
import type { FileStorage } from './files/index.js';
import type { InviteService, WorkspaceService } from './workspaces/index.js';
import type { IpBlockService } from './ip-blocks/index.js';
import type { LinkPreviewService } from './link-previews/index.js';
import type { MessageService } from './messages/index.js';
import type { MlsService } from './mls/index.js';
import type { ModerationService } from './moderation/index.js';
import type { PluginService } from './plugins/index.js';
import type { PresenceService, TypingService } from './presence/index.js';
import type { RealtimeService } from './realtime/index.js';
import type { RegistrationService, SignupPolicy } from './registration/index.js';
import type { SearchService } from './search/index.js';
import type { SessionService } from './sessions/index.js';

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
