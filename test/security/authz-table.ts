import { CALLERS, type Caller } from './_callers.js';

// The authorization matrix's expected outcomes: who may call each GraphQL root and each HTTP
// route of the served app, in the world of test/_util/world.ts (one workspace "World" with an
// owner, a moderator, a member, a guest who sees #general only, a member invited to an encrypted
// conversation who has not accepted, a person removed a moment ago; a stranger who asked the
// owner for a DM; an instance operator; a member of another workspace; a person of another server
// who joined through their relay). Read it as the permission table of the product: every caller
// not listed under `may` must be refused (UNAUTHENTICATED, FORBIDDEN or NOT_FOUND), every caller
// listed must not be. authz-matrix.test.ts fails on a root or route without a row, on a row
// without a root, and on any answer that differs; it also fails when an answer holds a text of
// SECRET_TEXTS (below) for someone who may not read it, or a field the SDL keeps to the caller
// (another user's email, an edit history to a non-Moderator, a reporter's id to a Moderator).
// What each row is called with is in authz-arguments.ts.

const except = (...out: Caller[]): Caller[] => CALLERS.filter((c) => !out.includes(c));

/** Everyone, anonymous included. */
export const ANYONE: readonly Caller[] = CALLERS;
/** Everyone signed in, the remote person included. */
export const SIGNED_IN = except('anonymous');
/** Signed in with an account of this server (a remote person's account lives at their relay). */
export const LOCAL = except('anonymous', 'remote');
/** The workspace's members: the guest within the channels they were given. */
export const MEMBERS: readonly Caller[] = [
  'guest',
  'member',
  'moderator',
  'owner',
  'invitee',
  'remote',
];
/** Members who are not guests. */
export const FULL_MEMBERS = MEMBERS.filter((c) => c !== 'guest');
export const MODERATORS: readonly Caller[] = ['moderator', 'owner'];
export const OWNER: readonly Caller[] = ['owner'];
export const OPERATOR: readonly Caller[] = ['operator'];
/** Pages and probes: not served to other servers (a relay forwards only /api). */
export const NOT_RELAYED = except('remote');
/** Nobody by who they are: the call is authorized by a secret or a proof it carries. */
export const BY_SECRET: readonly Caller[] = [];

export interface Row {
  /** Who may call it; everyone else is refused. */
  may: readonly Caller[];
  /** Codes besides UNAUTHENTICATED, FORBIDDEN and NOT_FOUND that count as a refusal here. */
  refusedAs?: readonly string[];
  /**
   * The first allowed call uses the object up (deletes, accepts, revokes it): an allowed caller
   * after it may find it gone (NOT_FOUND). Anywhere else NOT_FOUND to an allowed caller fails.
   */
  usesUp?: true;
  /** Why the row is what it is, where the product's rule is not obvious. */
  why?: string;
}

/** Query roots; a key `root@case` is a further row of `root` with other arguments. */
export const QUERIES: Record<string, Row> = {
  serverInfo: { may: ANYONE },
  me: { may: SIGNED_IN },
  mySessions: { may: SIGNED_IN },
  registrationChallenge: { may: ANYONE },
  instanceInvites: { may: OPERATOR },
  channels: { may: MEMBERS },
  commands: { may: MEMBERS },
  commandDiscover: { may: MEMBERS },
  macros: { may: MEMBERS },
  keybinds: { may: MEMBERS },
  pipelines: { may: MODERATORS },
  commandAudit: { may: MODERATORS },
  inboxConversations: { may: SIGNED_IN },
  conversation: { may: MEMBERS },
  'conversation@private': { may: ['member', 'moderator', 'owner'] },
  'conversation@direct': { may: ['member', 'owner'] },
  'conversation@group': { may: ['member', 'moderator', 'owner'] },
  'conversation@encrypted': { may: ['member', 'owner'] },
  'conversation@requested': {
    may: ['stranger'],

    why: 'the person asked reads the request (dmRequests), not the conversation, until accepting',
  },
  myDataExports: { may: SIGNED_IN },
  myDevices: { may: SIGNED_IN },
  myRemoteHosts: {
    may: SIGNED_IN,
    why: 'each person reads the hosts they reached through this relay; a remote person has none here',
  },
  myKeyIdentity: { may: SIGNED_IN },
  deviceLinkOffers: { may: SIGNED_IN },
  deviceLinkOfferStatus: {
    may: ANYONE,
    why: 'the offer secret is the authority: the new device polls before it has a session',
  },
  myDmSettings: { may: SIGNED_IN },
  dmRequests: { may: SIGNED_IN },
  blockedUsers: { may: SIGNED_IN },
  customEmojis: { may: MEMBERS },
  messages: { may: MEMBERS },
  'messages@private': { may: ['member', 'moderator', 'owner'] },
  'messages@direct': { may: ['member', 'owner'] },
  'messages@group': { may: ['member', 'moderator', 'owner'] },
  'messages@encrypted': { may: ['member', 'owner'] },
  'messages@requested': { may: ['stranger'] },
  'messages@archived': { may: FULL_MEMBERS },
  threadReplies: { may: MEMBERS },
  pinnedMessages: { may: MEMBERS },
  mlsGroupState: { may: ['member', 'owner'] },
  mlsCommits: { may: ['member', 'owner'] },
  mlsWelcomes: { may: ['member', 'owner'] },
  instanceReports: { may: OPERATOR },
  instancePrincipalBlocks: { may: OPERATOR },
  instanceIpBlocks: { may: OPERATOR },
  instanceAuditLog: { may: OPERATOR },
  workspaceReports: { may: MODERATORS },
  notifications: { may: SIGNED_IN },
  notificationSettings: { may: SIGNED_IN },
  webPushPublicKey: { may: SIGNED_IN },
  workspacePlugins: { may: MEMBERS },
  presence: { may: SIGNED_IN, why: 'answers only for people the caller shares a space with' },
  myPresence: { may: SIGNED_IN },
  searchMessages: { may: SIGNED_IN, why: 'finds only what the caller may read' },
  searchMembers: { may: MEMBERS },
  searchChannels: { may: MEMBERS },
  searchWorkspaces: { may: SIGNED_IN },
  searchLanguage: { may: MEMBERS },
  myWorkspaces: { may: SIGNED_IN },
  workspace: { may: MEMBERS },
  workspaceInvites: {
    may: MEMBERS,
    why: 'every invite for the owner and Moderators, one own for everyone else (the SDL)',
  },
};

/**
 * Mutation roots, in the order they run: the world is changed by the calls that are allowed, so
 * the ones that take something away (a membership, a session, ownership) come last.
 */
export const MUTATIONS: Record<string, Row> = {
  ping: { may: SIGNED_IN, why: 'a mutation: without a session there is no CSRF token' },
  keyLoginChallenge: { may: ANYONE },
  login: {
    may: ANYONE,

    why: 'anyone holding the password; signing in while signed in starts another session',
  },
  loginWithKey: {
    may: BY_SECRET,

    refusedAs: ['VALIDATION'],
  },
  signupWithKey: {
    may: BY_SECRET,

    refusedAs: ['VALIDATION'],
  },
  signupWithInvite: {
    may: BY_SECRET,

    why: 'signups need a device key unless SVC_SIGNUP_REQUIRE_KEYS=false: FORBIDDEN to all',
  },
  requestPasswordReset: {
    may: ANYONE,
  },
  resetPassword: {
    may: BY_SECRET,

    refusedAs: ['INVALID_TOKEN', 'VALIDATION'],
  },
  sendDeviceLinkOffer: {
    may: BY_SECRET,

    refusedAs: ['VALIDATION'],
  },
  applyRemoteRevocation: {
    may: BY_SECRET,

    refusedAs: ['VALIDATION'],
  },
  joinWorkspace: {
    may: BY_SECRET,

    refusedAs: ['INVALID_TOKEN'],
  },
  updateProfile: { may: LOCAL },
  updateDmSettings: { may: SIGNED_IN },
  updateNotificationSettings: { may: SIGNED_IN },
  setPresence: { may: SIGNED_IN },
  setSearchLanguage: {
    may: MODERATORS,
  },
  requestDataExport: { may: SIGNED_IN },
  markAllNotificationsRead: { may: SIGNED_IN },
  registerPushSubscription: {
    may: SIGNED_IN,
  },
  unregisterPushSubscription: {
    may: SIGNED_IN,
  },
  blockUser: { may: SIGNED_IN },
  unblockUser: { may: SIGNED_IN },
  reportUser: {
    may: SIGNED_IN,
  },
  reportWorkspace: {
    may: MEMBERS,
  },
  createWorkspace: { may: SIGNED_IN },
  createConversation: {
    may: LOCAL,
    why: 'the world takes DM partners from this server only (SVC_DM_PARTNERS=this_server)',
  },
  createInstanceInvite: { may: OPERATOR },
  revokeInstanceInvite: { may: OPERATOR },
  instanceBlockPrincipal: { may: OPERATOR },
  instanceUnblockPrincipal: { may: OPERATOR },
  instanceBlockIp: { may: OPERATOR },
  instanceUnblockIp: { may: OPERATOR },
  instanceResolveReport: { may: OPERATOR },

  // In the workspace.
  createChannel: {
    may: FULL_MEMBERS,
  },
  setChannelTopic: {
    may: FULL_MEMBERS,
  },
  renameChannel: {
    may: FULL_MEMBERS,
  },
  unarchiveChannel: { may: MODERATORS },
  archiveChannel: { may: MODERATORS },
  joinChannel: { may: FULL_MEMBERS },
  addChannelMembers: {
    may: ['member', 'moderator', 'owner'],
  },
  removeChannelMember: {
    may: MODERATORS,
  },
  sendMessage: {
    may: MEMBERS,
  },
  forwardMessage: {
    may: FULL_MEMBERS,
  },
  editMessage: {
    may: ['member'],
  },
  addReaction: { may: MEMBERS },
  removeReaction: { may: MEMBERS },
  pinMessage: { may: FULL_MEMBERS },
  unpinMessage: { may: FULL_MEMBERS },
  markRead: { may: MEMBERS },
  markConversationNotificationsRead: { may: MEMBERS },
  markNotificationRead: { may: OWNER },
  startTyping: { may: ['member', 'owner'] },
  reportMessage: {
    may: MEMBERS,
  },
  'reportMessage@encrypted': {
    may: ['member', 'owner'],
    why: 'the two who read the encrypted conversation, with what they decrypted; its pending invitee reads nothing and is refused (NOT_FOUND)',
  },
  resolveWorkspaceReport: { may: MODERATORS },
  setNotificationRule: {
    may: MEMBERS,
  },
  setChannelMentionPolicy: {
    may: MODERATORS,
  },
  createAttachment: {
    may: MEMBERS,
  },
  finalizeAttachment: {
    may: ['member'],
  },
  createCustomEmoji: {
    may: MODERATORS,
  },
  executeCommand: {
    may: MEMBERS,
  },
  executeMacro: {
    may: MEMBERS,
  },
  createMacro: {
    may: MODERATORS,
  },
  setKeybind: {
    may: MODERATORS,
    why: "a workspace's keybind; a personal one (no serverId) is anyone's",
  },
  createPipeline: {
    may: MODERATORS,
  },
  setPipelineEnabled: { may: MODERATORS },
  addWorkspacePlugin: {
    may: MODERATORS,
  },
  updateWorkspacePlugin: {
    may: MODERATORS,
  },
  createWorkspaceInvite: {
    may: FULL_MEMBERS,
  },
  revokeWorkspaceInvite: { may: MODERATORS },
  updateWorkspace: {
    may: MODERATORS,
  },
  setMemberRole: {
    may: MODERATORS,
  },
  timeoutMember: {
    may: MODERATORS,
  },
  clearTimeout: {
    may: MODERATORS,
  },
  deleteWorkspace: {
    may: OWNER,

    why: 'the wrong confirmation keeps the world: the owner gets VALIDATION, the rest a refusal',
  },

  // End-to-end encryption and devices.
  claimKeyPackages: {
    may: ['member', 'owner'],
  },
  commitMlsGroup: {
    may: ['member', 'owner'],
  },
  sendEncryptedMessage: {
    may: ['member', 'owner'],

    why: 'a well-formed PrivateMessage (the one already sent): the format is checked first',
  },
  publishKeyPackage: {
    may: ['member'],
  },
  approveDeviceLink: {
    may: OWNER,
  },
  enrollIdentityKey: {
    may: BY_SECRET,

    refusedAs: ['VALIDATION'],
  },
  rotateIdentityKey: {
    may: BY_SECRET,

    refusedAs: ['VALIDATION'],
  },

  // Conversations and DM requests.
  addConversationMembers: {
    may: ['member', 'moderator', 'owner'],
  },
  acceptDmRequest: { may: OWNER },
  declineDmRequest: { may: OWNER },
  acceptConversationInvite: {
    may: ['invitee'],
  },
  declineConversationInvite: {
    may: ['invitee'],
  },

  // What takes something away: objects, then memberships, ownership, devices and sessions.
  deleteKeybind: {
    usesUp: true,
    may: MODERATORS,
  },
  deleteMacro: {
    usesUp: true,
    may: MODERATORS,
  },
  deletePipeline: {
    usesUp: true,
    may: MODERATORS,
  },
  removeWorkspacePlugin: {
    usesUp: true,
    may: MODERATORS,
  },
  deleteCustomEmoji: {
    usesUp: true,
    may: MODERATORS,
  },
  deleteAttachment: {
    usesUp: true,
    may: ['member', 'moderator', 'owner'],
  },
  deleteMessage: { may: ['moderator', 'owner'] },
  leaveChannel: { may: FULL_MEMBERS },
  leaveConversation: {
    may: ['guest', 'member', 'moderator', 'owner'],
    why: 'the guest was added by addConversationMembers above',
  },
  cancelDeviceLink: {
    may: OWNER,
  },
  'cancelDeviceLink@secret': {
    may: ANYONE,

    why: 'the offer secret is the authority (the new device has no session)',
  },
  removeWorkspaceMember: {
    usesUp: true,
    may: MODERATORS,
  },
  transferWorkspaceOwnership: {
    may: OWNER,
  },
  leaveWorkspace: {
    may: ['member', 'moderator', 'owner', 'invitee', 'remote'],

    why: 'the guest was removed above; the owner, a Moderator now, may leave, the new owner not',
  },
  revokeSession: {
    may: ['stranger'],
  },
  requestAccountDeletion: {
    may: LOCAL,
  },
  cancelAccountDeletion: { may: LOCAL },
  changePassword: {
    may: LOCAL,
  },
  revokeDevice: { may: ['member'] },
  logoutOtherSessions: { may: SIGNED_IN },
  logout: { may: ANYONE, why: 'without a session it ends nothing and answers false' },
};

export const SUBSCRIPTIONS: Record<string, Row> = {
  workspaceEvents: { may: MEMBERS },
  relayStream: { may: LOCAL, why: 'a person of this server, whose relay this server is' },
};

export interface RouteRow {
  may: readonly Caller[];
  why?: string;
}

/** HTTP routes, `METHOD path` as the app registers them (HEAD follows GET). */
export const ROUTES: Record<string, RouteRow> = {
  'GET /healthz': { may: NOT_RELAYED },
  'GET /readyz': { may: NOT_RELAYED },
  'GET /.well-known/svc-server': { may: NOT_RELAYED },
  'GET /': { may: NOT_RELAYED },
  'GET /invite/*': { may: NOT_RELAYED },
  'GET /reset-password': { may: NOT_RELAYED },
  'GET /w/*': { may: NOT_RELAYED },
  'GET /dm/*': { may: NOT_RELAYED },
  'GET /settings': { may: NOT_RELAYED },
  'GET /settings/*': { may: NOT_RELAYED },
  'GET /admin': { may: NOT_RELAYED },
  'GET /admin/*': { may: NOT_RELAYED },
  'GET /assets/:name': { may: NOT_RELAYED },
  'GET /sw.js': { may: NOT_RELAYED },
  'GET /icon.svg': { may: NOT_RELAYED },
  'GET /icon-192.png': { may: NOT_RELAYED },
  'GET /icon-512.png': { may: NOT_RELAYED },
  'GET /icon-maskable-512.png': { may: NOT_RELAYED },
  'GET /manifest.webmanifest': { may: NOT_RELAYED },
  'GET /plugin-sandbox.html': {
    may: NOT_RELAYED,
    why: 'the same document for everyone: plugin code runs in it, sandboxed, with no session',
  },
  'GET /api/sdl': { may: ANYONE },
  'POST /api': { may: ANYONE, why: 'each GraphQL root has its row above' },
  'GET /api': {
    may: BY_SECRET,

    why: 'the explorer is served only with SVC_ENABLE_GRAPHIQL=true (off here): 404 for all',
  },
  'POST /api/files/upload': {
    may: ['member'],

    why: 'the upload token of createAttachment, given to the member who asked for it',
  },
  'POST /api/files/avatar': { may: LOCAL },
  'GET /api/files/*': { may: SIGNED_IN },
  'GET /api/attachments/:id/download': {
    may: MEMBERS,
  },
  'GET /api/reports/:reportId/attachments/:sha': {
    may: BY_SECRET,

    why: 'no world report holds an encrypted attachment: 404 for all (test/moderation/reports.test.ts)',
  },
  'GET /api/data-exports/:id/download': {
    may: ['member'],
    why: 'the member’s own export: offered to that person only (test/data/data-export-download.test.ts)',
  },
  'POST /api/plugin-bundles/:serverId': { may: MODERATORS },
  'GET /api/plugin-bundles/:serverId/:sha256': {
    may: MEMBERS,
  },
  'GET /api/notifications/unsubscribe': {
    may: ANYONE,
    why: 'the member’s token from the digest mail is the authority, whoever holds it (signed in or not, here or through a relay); a wrong one is 400 (test/notifications/digest.test.ts)',
  },
  'POST /api/notifications/unsubscribe': {
    may: ANYONE,
    why: 'as GET: the one-click unsubscribe of RFC 8058, by the token',
  },
  'GET /api/remote/:host/*': {
    may: BY_SECRET,

    why: 'a relayed request needs the device signature (test/federation/relay-route.test.ts)',
  },
  'POST /api/remote/:host/*': {
    may: BY_SECRET,
  },
  'GET /s2s/v1/ping': { may: BY_SECRET, why: 'server signature' },
  'POST /s2s/v1/events': {
    may: BY_SECRET,
  },
  'POST /s2s/v1/revocations': {
    may: BY_SECRET,
  },
  'GET /s2s/v1/forward/*': { may: BY_SECRET },
  'POST /s2s/v1/forward/*': {
    may: BY_SECRET,
  },
};

/**
 * Texts that must reach only the people who may read where they were written: any answer to
 * anyone else that holds one is a leak.
 */
export const SECRET_TEXTS: Array<{ text: string; readers: readonly Caller[] }> = [
  { text: 'only for the private channel', readers: ['member', 'moderator', 'owner'] },
  { text: 'a direct word', readers: ['member', 'owner'] },
  { text: 'a group word', readers: ['member', 'moderator', 'owner'] },
  { text: 'hello, may I write to you?', readers: ['stranger', 'owner'] },
  { text: 'the world is ready', readers: MEMBERS },
];
