// The shapes this client reads from the API (the SDL at GET /api/sdl is the reference). Only the
// fields the documents in queries.ts select.

export type Role = 'OWNER' | 'MODERATOR' | 'MEMBER' | 'GUEST';
export type ConversationKind = 'CHANNEL' | 'DIRECT' | 'GROUP';
export type PresenceStatus = 'ONLINE' | 'AWAY' | 'OFFLINE';
export type FeatureState = 'ENABLED' | 'DISABLED' | 'UNAVAILABLE';

export interface User {
  id: string;
  username: string;
  displayName: string | null;
  /** `/api/files/avatars/...` on this server; null without an avatar. */
  avatarUrl?: string | null;
}

export interface Me extends User {
  email: string | null;
  instanceOperator: boolean;
  deletionScheduledFor: string | null;
  probationEndsAt: string | null;
}

export interface ServerInfo {
  version: string;
  apiVersion: number;
  features: { key: string; state: FeatureState; reason: string | null }[];
  instanceNotice: string | null;
  termsUrl: string | null;
  signupRequiresKeys: boolean;
  openRegistration: boolean;
  registrationPowBits: number;
  limits: { messageBytes: number | null };
}

export interface Workspace {
  id: string;
  name: string;
  description: string | null;
  isDirect: boolean;
  ownerId: string | null;
  myRole: Role | null;
  myTimedOutUntil: string | null;
  memberCount: number;
}

export interface ReactionGroup {
  emoji: string;
  count: number;
  reactedByMe: boolean;
}

export interface Message {
  id: string;
  conversationId: string;
  author: User | null;
  text: string | null;
  isDeleted: boolean;
  createdAt: string;
  editedAt: string | null;
  threadRootId: string | null;
  replyCount: number;
  lastReplyAt: string | null;
  reactions: ReactionGroup[];
  mentions: { userIds: string[]; channelIds: string[]; here: boolean };
  pinned: boolean;
  linkPreviews: LinkPreview[];
  attachments: Attachment[];
  /** An encrypted message as the server keeps it (MLS ciphertext, base64url); null otherwise. */
  ciphertext?: string | null;
  mls?: {
    incarnation: number;
    epoch: number;
    senderDeviceId: string | null;
    frankingCommitment: string;
  } | null;
  /** Set on this browser: why an encrypted message cannot be read here, in words. */
  unreadable?: string | null;
  /** Set on this browser for a decrypted message: the franking opening key and the body. */
  opening?: string;
  body?: string;
  /**
   * Set on this browser for an encrypted edit: the message it replaces (an edit travels as a new
   * encrypted message, docs/web-client-encrypted.md "Edits"; it is never shown on its own).
   */
  replaces?: string;
  /** Set on an encrypted message shown edited: the edit that gave its text, for a report. */
  editedBy?: { id: string; body: string; opening: string };
}

export interface Attachment {
  id: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  width: number | null;
  height: number | null;
  url: string;
}

export interface CustomEmoji {
  id: string;
  name: string;
  shortcode: string;
  url: string;
  width: number;
  height: number;
}

export interface MessageSearchHit {
  message: Message;
  highlights: { start: number; length: number }[];
  /** False for a public channel the person has not joined. */
  joined: boolean;
  /** The part of a long text around the first match (the whole of a short one). */
  excerpt: {
    text: string;
    start: number;
    end: number;
    highlights: { start: number; length: number }[];
  };
}

export interface LinkPreview {
  url: string;
  title: string | null;
  description: string | null;
  imageUrl: string | null;
  siteName: string | null;
}

export interface DmRequest {
  id: string;
  from: User | null;
  to: User | null;
  conversationId: string;
  state: 'PENDING' | 'ACCEPTED' | 'DECLINED';
  createdAt: string;
  preview?: Message[];
}

export interface Conversation {
  id: string;
  serverId: string;
  kind: ConversationKind;
  name: string | null;
  topic: string | null;
  isPrivate: boolean;
  encrypted: boolean;
  archived: boolean;
  memberIds: string[];
  memberCount: number;
  isMember: boolean;
  /** Invitees of an encrypted conversation who have not accepted yet. */
  pendingMemberIds?: string[];
  unreadCount: number;
  /** Unread notifications here (mentions, replies, keywords; every message of a DM). */
  mentionCount: number;
  /** The person's own rule for this conversation; null when the wider one applies. */
  notificationRule?: { level: NotificationLevel | null; mutedUntil: string | null } | null;
  lastActivityAt: string;
  members?: User[];
  dmRequest?: { id: string; state: string } | null;
}

export interface MessagePage {
  items: Message[];
  hasMore: boolean;
  nextCursor: string | null;
  prevCursor: string | null;
}

export interface WorkspaceMember {
  user: User;
  role: Role;
  joinedAt: string;
  timedOutUntil: string | null;
}

export interface WorkspaceInvite {
  id: string;
  role: Role;
  createdAt: string;
  expiresAt: string | null;
  maxUses: number | null;
  uses: number;
  email: string | null;
  state: string;
}

/** The envelope every live event shares (docs/realtime.md). */
export interface LiveEvent {
  type: string;
  serverId: string | null;
  conversationId: string | null;
  /** On relayStream, the host an event came from (asked only of a server that relays). */
  hostServerId?: string | null;
  at: string;
  payload: Record<string, unknown>;
}

export type NotificationLevel = 'ALL' | 'MENTIONS' | 'NOTHING';
export type NotificationKind =
  'MENTION' | 'CHANNEL' | 'KEYWORD' | 'THREAD_REPLY' | 'DIRECT' | 'MESSAGE';

export interface AppNotification {
  id: string;
  kind: NotificationKind;
  serverId: string;
  conversationId: string;
  messageId: string;
  threadRootId: string | null;
  encrypted: boolean;
  createdAt: string;
  read: boolean;
  actor: User | null;
  message: Message | null;
  conversation: Conversation | null;
}

export interface NotificationRule {
  serverId: string;
  conversationId: string | null;
  level: NotificationLevel | null;
  mutedUntil: string | null;
}

export interface NotificationSettings {
  level: NotificationLevel;
  keywords: string[];
  timeZone: string;
  quietHoursStart: string | null;
  quietHoursEnd: string | null;
  doNotDisturbUntil: string | null;
  doNotDisturbNow: boolean;
  emailDigests: boolean;
  rules: NotificationRule[];
}

export interface CommandArgument {
  name: string;
  type: string;
  description: string;
  required: boolean;
}

export interface Command {
  name: string;
  description: string;
  capability: string;
  destructive: boolean;
  surfaces: string[];
  arguments: CommandArgument[];
  source: { kind: 'BUILTIN' | 'PLUGIN'; pluginId: string | null; workspacePluginId: string | null };
}

export interface CommandConfirmation {
  token: string;
  summary: string;
  expiresAt: string;
}

export interface CommandRun {
  status: 'DONE' | 'CONFIRMATION_REQUIRED' | 'CLIENT_ACTION';
  message: string;
  messageId: string | null;
  auditId: string;
  command: { name: string; source?: Command['source'] };
  confirmation: CommandConfirmation | null;
  /** The checked arguments of a CLIENT_ACTION run, for the plugin's handler. */
  args?: Record<string, unknown> | null;
}

export interface MacroStep {
  command: string;
  plugin: string | null;
  args: Record<string, unknown>;
}

export interface Macro {
  id: string;
  serverId: string | null;
  ownerId: string | null;
  name: string;
  description: string | null;
  params: string[];
  steps: MacroStep[];
}

export interface MacroRun {
  status: 'DONE' | 'CONFIRMATION_REQUIRED' | 'FAILED';
  failedStep: number | null;
  error: { code: string; message: string } | null;
  confirmation: CommandConfirmation | null;
  steps: CommandRun[];
}

export interface Keybind {
  id: string;
  serverId: string | null;
  ownerId: string | null;
  chord: string;
  command: string | null;
  macroId: string | null;
  args: Record<string, unknown>;
}

export interface PluginCommand {
  name: string;
  description: string;
  arguments: { name: string; type: string; description: string | null; required: boolean }[];
}

/** One setting of a bundle's `contributes.settings` (docs/plugins.md). */
export interface PluginSettingSchema {
  type: 'string' | 'integer' | 'number' | 'boolean';
  title?: string;
  description?: string;
  default?: string | number | boolean;
  enum?: (string | number | boolean)[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

export interface WorkspacePlugin {
  id: string;
  pluginId: string;
  name: string;
  version: string;
  description: string;
  author: { name: string; email: string | null; url: string | null };
  capabilities: string[];
  enabled: boolean;
  settings: Record<string, unknown>;
  settingsSchema: {
    properties?: Record<string, PluginSettingSchema>;
    required?: string[];
  } | null;
  bundleSha256: string;
  bundleSize: number;
  commands: PluginCommand[];
  keybinds?: { keys: string; command: string; description: string | null }[];
}
