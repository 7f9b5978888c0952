import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';

import type { Caller, MatrixWorld } from './_callers.js';

// The arguments of the authorization matrix's calls (authz-table.ts holds the outcomes): the
// world's objects each row is called on. A root argument a row does not give comes from
// `argument`, by name.

export type Vars = Record<string, unknown>;

/** A root argument by name, for the world's objects (a row's `args` overrides it). */
export function argument(w: MatrixWorld, root: string, name: string): unknown {
  const { ids } = w;
  switch (name) {
    case 'serverId':
      return ids.workspace;
    case 'conversationId':
      return root.startsWith('mls') || root === 'claimKeyPackages' ? ids.encrypted : ids.general;
    case 'id':
      return ids.general;
    case 'messageId':
      return ids.message;
    case 'userIds':
      return Object.values(w.idOf).filter(Boolean);
    case 'query':
      return 'world';
    case 'surface':
      return 'MESSAGE_BOX';
    case 'context':
      return { serverId: ids.workspace, conversationId: ids.general };
    case 'incarnation':
      return ids.mlsIncarnation;
    case 'fromEpoch':
      return 0;
    case 'offerId':
      return ids.deviceLinkOffer;
    case 'offerSecret':
      return ids.deviceLinkOfferSecret;
    default:
      return undefined;
  }
}

const conv = (id: keyof MatrixWorld['ids']) => (w: MatrixWorld) => ({ id: w.ids[id] });
const inConv = (id: keyof MatrixWorld['ids']) => (w: MatrixWorld) => ({
  conversationId: w.ids[id],
});

const unique = (caller: Caller) => `${caller.slice(0, 4)}${Math.random().toString(36).slice(2, 8)}`;
const BAD_KEY = 'A'.repeat(43);

/** Arguments per row of authz-table.ts; `caller` is who is about to call. */
export const ARGS: Record<string, (w: MatrixWorld, caller: Caller) => Vars | Promise<Vars>> = {
  'conversation@private': conv('privateChannel'),
  'conversation@direct': conv('direct'),
  'conversation@group': conv('group'),
  'conversation@encrypted': conv('encrypted'),
  'conversation@requested': conv('requested'),
  'messages@private': inConv('privateChannel'),
  'messages@direct': inConv('direct'),
  'messages@group': inConv('group'),
  'messages@encrypted': inConv('encrypted'),
  'messages@requested': inConv('requested'),
  'messages@archived': inConv('archivedChannel'),
  login: (w) => ({ input: { username: w.people.stranger.username, password: w.password } }),
  loginWithKey: () => ({
    proof: { challengeId: '0', issuedAt: '2030-01-01T00:00:00Z', signature: 's' },
  }),
  signupWithKey: (_w, c) => ({
    input: {
      username: unique(c),
      identityPublicKey: BAD_KEY,
      devicePublicKey: BAD_KEY,
      challengeId: '0',
      issuedAt: '2030-01-01T00:00:00Z',
      identitySignature: 's',
      deviceSignature: 's',
    },
  }),
  signupWithInvite: (_w, c) => ({
    input: { username: unique(c), password: 'a long enough phrase 42' },
  }),
  requestPasswordReset: (w) => ({ input: { emailOrUsername: w.people.member.username } }),
  resetPassword: () => ({
    input: { token: 'not-a-token', newPassword: 'a long enough phrase 42' },
  }),
  sendDeviceLinkOffer: (w) => ({
    input: {
      username: w.people.owner.username,
      devicePublicKey: BAD_KEY,
      challengeId: '0',
      issuedAt: '2030-01-01T00:00:00Z',
      signature: 's',
    },
  }),
  applyRemoteRevocation: () => ({ statement: 'e30', signature: 's' }),
  joinWorkspace: () => ({ token: 'not-an-invite' }),
  updateProfile: () => ({ input: { displayName: 'Matrix' } }),
  updateDmSettings: () => ({ input: { inbound: 'ANYONE' } }),
  updateNotificationSettings: () => ({ input: { keywords: ['x'] } }),
  setPresence: () => ({ choice: 'AUTO' }),
  setSearchLanguage: (w) => ({ language: 'en', serverId: w.ids.workspace }),
  registerPushSubscription: () => ({
    input: { endpoint: 'https://push.example.com/x', p256dh: 'BAAA', auth: 'AAAA' },
  }),
  unregisterPushSubscription: () => ({ endpoint: 'https://push.example.com/x' }),
  blockUser: (w) => ({ userId: w.idOf.removed }),
  unblockUser: (w) => ({ userId: w.idOf.removed }),
  reportUser: (w) => ({ userId: w.idOf.outsider, category: 'SPAM', text: 'matrix' }),
  reportWorkspace: (w) => ({ serverId: w.ids.workspace, category: 'SPAM', text: 'matrix' }),
  createWorkspace: (_w, c) => ({ input: { name: unique(c) } }),
  createConversation: (w) => ({ input: { memberIds: [w.idOf.operator] } }),
  createInstanceInvite: () => ({ maxUses: 1 }),
  revokeInstanceInvite: (w) => ({ id: w.ids.instanceInvite }),
  instanceBlockPrincipal: () => ({ principalId: 'server:bad.example' }),
  instanceUnblockPrincipal: () => ({ principalId: 'server:bad.example' }),
  instanceBlockIp: () => ({ cidr: '198.51.100.0/24' }),
  instanceUnblockIp: () => ({ cidr: '198.51.100.0/24' }),
  instanceResolveReport: (w) => ({ id: w.ids.instanceReport }),
  createChannel: (w, c) => ({ input: { serverId: w.ids.workspace, name: unique(c) } }),
  setChannelTopic: (w) => ({ conversationId: w.ids.random, topic: 't' }),
  renameChannel: (w) => ({ conversationId: w.ids.random, name: 'random' }),
  unarchiveChannel: (w) => ({ conversationId: w.ids.archivedChannel }),
  archiveChannel: (w) => ({ conversationId: w.ids.archivedChannel }),
  joinChannel: (w) => ({ conversationId: w.ids.random }),
  addChannelMembers: (w) => ({ conversationId: w.ids.privateChannel, userIds: [w.idOf.invitee] }),
  removeChannelMember: (w) => ({ conversationId: w.ids.privateChannel, userId: w.idOf.invitee }),
  sendMessage: (w) => ({ input: { conversationId: w.ids.general, text: 'matrix says hi' } }),
  forwardMessage: (w) => ({ messageId: w.ids.message, toConversationId: w.ids.random }),
  editMessage: (w) => ({ messageId: w.ids.message, text: 'hello again' }),
  addReaction: (w) => ({ messageId: w.ids.message, emoji: '👋' }),
  removeReaction: (w) => ({ messageId: w.ids.message, emoji: '👋' }),
  markNotificationRead: (w) => ({ id: w.ownerNotification }),
  startTyping: (w) => ({ conversationId: w.ids.direct }),
  reportMessage: (w) => ({ messageId: w.ids.message, category: 'SPAM', text: 'matrix' }),
  'reportMessage@encrypted': (w) => ({
    messageId: w.ids.encryptedMessage,
    category: 'SPAM',
    reveal: w.encryptedReveal,
  }),
  resolveWorkspaceReport: (w) => ({ id: w.ids.workspaceReport }),
  setNotificationRule: (w) => ({ input: { serverId: w.ids.workspace, level: 'ALL' } }),
  setChannelMentionPolicy: (w) => ({ serverId: w.ids.workspace, policy: 'MODERATORS' }),
  createAttachment: (w) => ({ input: { conversationId: w.ids.general, fileName: 'a.txt' } }),
  finalizeAttachment: (w) => ({
    input: { attachmentId: w.ids.attachment, messageId: w.ids.message },
  }),
  createCustomEmoji: (w, c) => ({
    input: {
      serverId: w.ids.workspace,
      name: unique(c),
      contentType: 'image/png',
      image: w.pngBase64,
    },
  }),
  executeCommand: (w) => ({
    input: {
      command: 'me',
      args: { text: 'waves' },
      context: { serverId: w.ids.workspace, conversationId: w.ids.general },
    },
  }),
  executeMacro: (w) => ({
    input: {
      macroId: w.ids.macro,
      args: { who: 'you' },
      context: { serverId: w.ids.workspace, conversationId: w.ids.general },
    },
  }),
  createMacro: (w, c) => ({
    input: {
      serverId: w.ids.workspace,
      name: unique(c),
      steps: [{ command: 'me', args: { text: 'x' } }],
    },
  }),
  setKeybind: (w) => ({
    input: { serverId: w.ids.workspace, chord: 'Ctrl+Shift+M', command: 'me' },
  }),
  createPipeline: (w, c) => ({
    input: {
      serverId: w.ids.workspace,
      name: unique(c),
      trigger: { kind: 'MESSAGE', pattern: 'zzz', channelIds: [w.ids.general] },
      channelId: w.ids.general,
      steps: [{ command: 'me', args: { text: 'x' } }],
    },
  }),
  setPipelineEnabled: (w) => ({ id: w.ids.pipeline, enabled: true }),
  addWorkspacePlugin: (w) => ({
    input: { serverId: w.ids.workspace, bundleSha256: w.bundleSha256 },
  }),
  updateWorkspacePlugin: (w) => ({ input: { id: w.ids.plugin, enabled: true } }),
  createWorkspaceInvite: (w) => ({ input: { serverId: w.ids.workspace, maxUses: 1 } }),
  revokeWorkspaceInvite: (w) => ({ inviteId: w.ids.workspaceInvite }),
  updateWorkspace: (w) => ({
    input: { serverId: w.ids.workspace, description: 'still everything' },
  }),
  setMemberRole: (w) => ({
    input: { serverId: w.ids.workspace, userId: w.idOf.guest, role: 'GUEST' },
  }),
  timeoutMember: (w) => ({ serverId: w.ids.workspace, userId: w.idOf.invitee, minutes: 1 }),
  clearTimeout: (w) => ({ serverId: w.ids.workspace, userId: w.idOf.invitee }),
  deleteWorkspace: (w) => ({ input: { serverId: w.ids.workspace, confirmName: 'not the name' } }),
  claimKeyPackages: (w) => ({ conversationId: w.ids.encrypted, userId: w.idOf.member }),
  commitMlsGroup: (w) => ({
    input: {
      conversationId: w.ids.encrypted,
      incarnation: w.ids.mlsIncarnation,
      epoch: 99,
      commit: 'AAAA',
    },
  }),
  sendEncryptedMessage: (w) => ({
    input: {
      conversationId: w.ids.encrypted,
      incarnation: w.ids.mlsIncarnation,
      ...w.encrypted,
    },
  }),
  publishKeyPackage: (w) => ({ deviceId: w.memberDeviceId, keyPackage: 'AAAA' }),
  approveDeviceLink: (w) => ({ input: { offerId: w.ids.deviceLinkOffer, code: 'ABCD-EFGH' } }),
  enrollIdentityKey: () => ({
    input: {
      identityPublicKey: BAD_KEY,
      devicePublicKey: BAD_KEY,
      challengeId: '0',
      issuedAt: '2030-01-01T00:00:00Z',
      identitySignature: 's',
      deviceSignature: 's',
    },
  }),
  rotateIdentityKey: () => ({
    input: {
      identityPublicKey: BAD_KEY,
      newIdentityPublicKey: BAD_KEY,
      challengeId: '0',
      issuedAt: '2030-01-01T00:00:00Z',
      signature: 's',
      newSignature: 's',
    },
  }),
  addConversationMembers: (w) => ({
    input: { conversationId: w.ids.group, memberIds: [w.idOf.guest] },
  }),
  acceptDmRequest: (w) => ({ requestId: w.ids.dmRequest }),
  declineDmRequest: (w) => ({ requestId: w.outsiderDmRequest }),
  acceptConversationInvite: (w) => ({ serverId: DIRECT_SPACE_ID, conversationId: w.ids.encrypted }),
  declineConversationInvite: (w) => ({
    serverId: DIRECT_SPACE_ID,
    conversationId: w.ids.encrypted,
  }),
  deleteKeybind: (w) => ({ id: w.ids.keybind }),
  deleteMacro: (w) => ({ id: w.ids.macro }),
  deletePipeline: (w) => ({ id: w.ids.pipeline }),
  removeWorkspacePlugin: (w) => ({ id: w.ids.plugin }),
  deleteCustomEmoji: (w) => ({ serverId: w.ids.workspace, name: 'world' }),
  deleteAttachment: (w) => ({ attachmentId: w.ids.attachment }),
  deleteMessage: (w) => ({ messageId: w.ids.threadReply }),
  leaveChannel: (w) => ({ conversationId: w.ids.random }),
  leaveConversation: (w) => ({ conversationId: w.ids.group }),
  cancelDeviceLink: (w) => ({ offerId: w.ids.deviceLinkOffer, offerSecret: undefined }),
  'cancelDeviceLink@secret': (w) => ({
    offerId: w.ids.deviceLinkOffer,
    offerSecret: w.ids.deviceLinkOfferSecret,
  }),
  removeWorkspaceMember: (w) => ({ serverId: w.ids.workspace, userId: w.idOf.guest }),
  transferWorkspaceOwnership: (w) => ({
    input: { serverId: w.ids.workspace, userId: w.idOf.moderator },
  }),
  leaveWorkspace: (w) => ({ serverId: w.ids.workspace }),
  revokeSession: (w) => ({ id: w.strangerSpareSession }),
  requestAccountDeletion: (w, c) => ({
    input: { confirmUsername: w.agentOf(c)?.username ?? 'nobody' },
  }),
  changePassword: (w) => ({
    input: { currentPassword: w.password, newPassword: `${w.password} again` },
  }),
  revokeDevice: (w) => ({ deviceId: w.memberDeviceId }),
};

export interface RouteRequest {
  method: 'GET' | 'POST';
  url: string;
  body?: Buffer;
  contentType?: string;
}

const get = (url: string | ((w: MatrixWorld) => string)) => (w: MatrixWorld) => ({
  method: 'GET' as const,
  url: typeof url === 'string' ? url : url(w),
});

const unsubscribeUrl = (w: MatrixWorld) =>
  `/api/notifications/unsubscribe?token=${encodeURIComponent(w.memberUnsubscribeToken)}`;

/** The request of each route row (POST /api has none: the GraphQL rows call it). */
export const REQUESTS: Record<string, (w: MatrixWorld) => RouteRequest> = {
  'GET /healthz': get('/healthz'),
  'GET /readyz': get('/readyz'),
  'GET /.well-known/svc-server': get('/.well-known/svc-server'),
  'GET /': get('/'),
  'GET /invite/*': get('/invite/abc'),
  'GET /reset-password': get('/reset-password'),
  'GET /w/*': get('/w/x'),
  'GET /dm/*': get('/dm/x'),
  'GET /settings': get('/settings'),
  'GET /settings/*': get('/settings/x'),
  'GET /admin': get('/admin'),
  'GET /admin/*': get('/admin/x'),
  'GET /assets/:name': get((w) => `/assets/${w.assetName}`),
  'GET /sw.js': get('/sw.js'),
  'GET /icon.svg': get('/icon.svg'),
  'GET /icon-192.png': get('/icon-192.png'),
  'GET /icon-512.png': get('/icon-512.png'),
  'GET /icon-maskable-512.png': get('/icon-maskable-512.png'),
  'GET /manifest.webmanifest': get('/manifest.webmanifest'),
  'GET /api/sdl': get('/api/sdl'),
  'GET /api': get('/api'),
  'POST /api/files/upload': (w) => w.uploadRequest(),
  'POST /api/files/avatar': (w) => w.avatarRequest(),
  'GET /api/files/*': get((w) => w.avatarUrl),
  'GET /api/attachments/:id/download': get((w) => `/api/attachments/${w.ids.attachment}/download`),
  'GET /api/reports/:reportId/attachments/:sha': get(
    (w) => `/api/reports/${w.ids.workspaceReport}/attachments/${'0'.repeat(64)}`,
  ),
  'GET /api/data-exports/:id/download': get((w) => w.memberExportUrl),
  'POST /api/plugin-bundles/:serverId': (w) => w.bundleRequest(),
  'GET /api/plugin-bundles/:serverId/:sha256': get(
    (w) => `/api/plugin-bundles/${w.ids.workspace}/${w.bundleSha256}`,
  ),
  'GET /api/notifications/unsubscribe': get(unsubscribeUrl),
  'POST /api/notifications/unsubscribe': (w) => ({ ...get(unsubscribeUrl)(w), method: 'POST' }),
  'GET /api/remote/:host/*': get('/api/remote/127.0.0.1:9/api/sdl'),
  'POST /api/remote/:host/*': (w) => ({ ...get('/api/remote/127.0.0.1:9/api')(w), method: 'POST' }),
  'GET /s2s/v1/ping': get('/s2s/v1/ping'),
  'POST /s2s/v1/events': (w) => ({ ...get('/s2s/v1/events')(w), method: 'POST' }),
  'POST /s2s/v1/revocations': (w) => ({ ...get('/s2s/v1/revocations')(w), method: 'POST' }),
  'GET /s2s/v1/forward/*': get('/s2s/v1/forward/api/sdl'),
  'POST /s2s/v1/forward/*': (w) => ({ ...get('/s2s/v1/forward/api')(w), method: 'POST' }),
};
