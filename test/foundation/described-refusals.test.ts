import { getIntrospectionQuery, buildClientSchema, type IntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin, ok } from '../workspaces/_helpers.js';

// SDL descriptions say what the server does (issue 40, item 10): each refusal below is named in
// the description of the field that gives it, and the field gives it. A description that stops
// naming a code its field answers, or a field that answers another code, fails here.

const NIL = '0190d5c4-0000-7000-8000-000000000000';

interface Case {
  field: string;
  code: string;
  query: string;
  vars: () => Record<string, unknown>;
  /** Who asks; null for no session. */
  as: () => Agent | null;
}

describe('refusals the SDL describes', () => {
  let t: TestApp;
  let owner: Agent;
  let member: Agent;
  let outsider: Agent;
  let serverId = '';
  let direct = '';
  let general = '';
  let mine = '';
  let gone = '';
  const descriptions = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUpAndIn(t);
    member = await signUpAndIn(t);
    outsider = await signUpAndIn(t);
    serverId = (await createWorkspace(t, owner, 'described')).id;
    await inviteAndJoin(t, owner, serverId, [member]);
    const spaces = ok(await t.gql('{ myWorkspaces { id isDirect } }', {}, owner)).myWorkspaces;
    direct = spaces.find((w: { isDirect: boolean }) => w.isDirect).id;
    const chans = ok(
      await t.gql('query($s: ID!) { channels(serverId: $s) { id name } }', { s: serverId }, owner),
    ).channels as Array<{ id: string; name: string }>;
    general = chans.find((c) => c.name === 'general')!.id;
    const send = async (text: string) =>
      ok(
        await t.gql(
          'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
          { i: { conversationId: general, text } },
          owner,
        ),
      ).sendMessage.id as string;
    mine = await send('kept');
    gone = await send('deleted');
    ok(
      await t.gql('mutation($m: ID!) { deleteMessage(messageId: $m) { id } }', { m: gone }, owner),
    );
    const schema = buildClientSchema(
      ok(await t.gql(getIntrospectionQuery(), {}, owner)) as unknown as IntrospectionQuery,
    );
    for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
      for (const [name, f] of Object.entries(root.getFields())) {
        descriptions.set(name, f.description ?? '');
      }
    }
  });
  afterAll(async () => t?.close());

  const cases: Case[] = [
    {
      field: 'setMemberRole',
      code: 'VALIDATION',
      query: 'mutation($i: SetMemberRoleInput!) { setMemberRole(input: $i) { role } }',
      vars: () => ({ i: { serverId, userId: member.id, role: 'OWNER' } }),
      as: () => owner,
    },
    {
      field: 'leaveWorkspace',
      code: 'VALIDATION',
      query: 'mutation($s: ID!) { leaveWorkspace(serverId: $s) }',
      vars: () => ({ s: serverId }),
      as: () => owner,
    },
    {
      field: 'deleteWorkspace',
      code: 'VALIDATION',
      query: 'mutation($i: DeleteWorkspaceInput!) { deleteWorkspace(input: $i) { deleted } }',
      vars: () => ({ i: { serverId: direct, confirmName: 'x' } }),
      as: () => owner,
    },
    {
      field: 'timeoutMember',
      code: 'VALIDATION',
      query: `mutation($s: ID!, $u: ID!) { timeoutMember(serverId: $s, userId: $u, minutes: 40321) {
        timedOutUntil } }`,
      vars: () => ({ s: serverId, u: member.id }),
      as: () => owner,
    },
    {
      field: 'createChannel',
      code: 'CONFLICT',
      query: 'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
      vars: () => ({ i: { serverId, name: 'general' } }),
      as: () => owner,
    },
    {
      field: 'joinWorkspace',
      code: 'INVALID_TOKEN',
      query: 'mutation { joinWorkspace(token: "no-such-invite") { id } }',
      vars: () => ({}),
      as: () => outsider,
    },
    {
      field: 'acceptConversationInvite',
      code: 'NOT_FOUND',
      query: `mutation($s: ID!, $c: ID!) { acceptConversationInvite(serverId: $s, conversationId: $c) {
        id } }`,
      vars: () => ({ s: direct, c: general }),
      as: () => owner,
    },
    {
      field: 'leaveConversation',
      code: 'VALIDATION',
      query: 'mutation($c: ID!) { leaveConversation(conversationId: $c) }',
      vars: () => ({ c: general }),
      as: () => owner,
    },
    {
      field: 'addReaction',
      code: 'VALIDATION',
      query: 'mutation($m: ID!) { addReaction(messageId: $m, emoji: ":no-such-emoji:") { id } }',
      vars: () => ({ m: mine }),
      as: () => owner,
    },
    {
      field: 'addReaction',
      code: 'CONFLICT',
      query: 'mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }',
      vars: () => ({ m: gone }),
      as: () => owner,
    },
    {
      field: 'editMessage',
      code: 'FORBIDDEN',
      query: 'mutation($m: ID!) { editMessage(messageId: $m, text: "mine now") { id } }',
      vars: () => ({ m: mine }),
      as: () => member,
    },
    {
      field: 'editMessage',
      code: 'CONFLICT',
      query: 'mutation($m: ID!) { editMessage(messageId: $m, text: "back") { id } }',
      vars: () => ({ m: gone }),
      as: () => owner,
    },
    {
      field: 'deleteMessage',
      code: 'FORBIDDEN',
      query: 'mutation($m: ID!) { deleteMessage(messageId: $m) { id } }',
      vars: () => ({ m: mine }),
      as: () => member,
    },
    {
      field: 'pinMessage',
      code: 'CONFLICT',
      query: 'mutation($m: ID!) { pinMessage(messageId: $m) { id } }',
      vars: () => ({ m: gone }),
      as: () => owner,
    },
    {
      field: 'forwardMessage',
      code: 'VALIDATION',
      query:
        'mutation($m: ID!, $c: ID!) { forwardMessage(messageId: $m, toConversationId: $c) { id } }',
      vars: () => ({ m: gone, c: general }),
      as: () => owner,
    },
    {
      field: 'changePassword',
      code: 'VALIDATION',
      query: 'mutation($i: ChangePasswordInput!) { changePassword(input: $i) }',
      vars: () => ({ i: { currentPassword: 'not the password', newPassword: 'a new password 1' } }),
      as: () => member,
    },
    {
      field: 'createMacro',
      code: 'VALIDATION',
      query: 'mutation($i: CreateMacroInput!) { createMacro(input: $i) { id } }',
      vars: () => ({ i: { name: 'nothing', steps: [{ command: 'no-such-command' }] } }),
      as: () => owner,
    },
    {
      field: 'deleteMacro',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { deleteMacro(id: $i) }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'deleteKeybind',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { deleteKeybind(id: $i) }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'deletePipeline',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { deletePipeline(id: $i) }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'customEmojis',
      code: 'VALIDATION',
      query: 'query($s: ID!) { customEmojis(serverId: $s) { name } }',
      vars: () => ({ s: direct }),
      as: () => owner,
    },
    {
      field: 'searchLanguage',
      code: 'NOT_FOUND',
      query: 'query($s: ID) { searchLanguage(serverId: $s) }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'commandAudit',
      code: 'VALIDATION',
      query: 'query($s: ID!) { commandAudit(serverId: $s, limit: 201) { nextCursor } }',
      vars: () => ({ s: serverId }),
      as: () => owner,
    },
    {
      field: 'startTyping',
      code: 'VALIDATION',
      query: 'mutation($c: ID!) { startTyping(conversationId: $c) }',
      vars: () => ({ c: general }),
      as: () => owner,
    },
    {
      field: 'requestAccountDeletion',
      code: 'VALIDATION',
      query: `mutation($i: RequestAccountDeletionInput!) { requestAccountDeletion(input: $i) {
        scheduledFor } }`,
      vars: () => ({ i: { confirmUsername: 'someone-else' } }),
      as: () => member,
    },
    {
      field: 'revokeSession',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { revokeSession(id: $i) }',
      vars: () => ({ i: NIL }),
      as: () => member,
    },
    {
      field: 'acceptDmRequest',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { acceptDmRequest(requestId: $i) { id } }',
      vars: () => ({ i: NIL }),
      as: () => member,
    },
    {
      field: 'declineConversationInvite',
      code: 'NOT_FOUND',
      query:
        'mutation($s: ID!, $c: ID!) { declineConversationInvite(serverId: $s, conversationId: $c) }',
      vars: () => ({ s: direct, c: general }),
      as: () => member,
    },
    {
      field: 'resolveWorkspaceReport',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { resolveWorkspaceReport(id: $i) { id } }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'setSearchLanguage',
      code: 'VALIDATION',
      query: 'mutation { setSearchLanguage(language: "xx") }',
      vars: () => ({}),
      as: () => member,
    },
    {
      field: 'setSearchLanguage',
      code: 'FORBIDDEN',
      query: 'mutation($s: ID) { setSearchLanguage(language: "de", serverId: $s) }',
      vars: () => ({ s: serverId }),
      as: () => member,
    },
    {
      field: 'deleteCustomEmoji',
      code: 'NOT_FOUND',
      query: 'mutation($s: ID!) { deleteCustomEmoji(serverId: $s, name: "no-such-emoji") }',
      vars: () => ({ s: serverId }),
      as: () => owner,
    },
    {
      field: 'publishKeyPackage',
      code: 'NOT_FOUND',
      query: 'mutation($d: ID!) { publishKeyPackage(deviceId: $d, keyPackage: "AAAA") { id } }',
      vars: () => ({ d: NIL }),
      as: () => owner,
    },
    {
      field: 'mlsGroupState',
      code: 'VALIDATION',
      query: 'query($c: ID!) { mlsGroupState(conversationId: $c) { epoch } }',
      vars: () => ({ c: general }),
      as: () => owner,
    },
    {
      field: 'mlsWelcomes',
      code: 'FORBIDDEN',
      query: '{ mlsWelcomes { id } }',
      vars: () => ({}),
      as: () => owner,
    },
    {
      field: 'finalizeAttachment',
      code: 'NOT_FOUND',
      query: 'mutation($i: FinalizeAttachmentInput!) { finalizeAttachment(input: $i) { id } }',
      vars: () => ({ i: { attachmentId: NIL, messageId: mine } }),
      as: () => owner,
    },
    {
      field: 'deleteAttachment',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { deleteAttachment(attachmentId: $i) }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'workspacePlugins',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { workspacePlugins(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'macros',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { macros(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'keybinds',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { keybinds(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'pipelines',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { pipelines(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'pipelines',
      code: 'FORBIDDEN',
      query: 'query($s: ID!) { pipelines(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => member,
    },
    {
      field: 'customEmojis',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { customEmojis(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'signupWithInvite',
      code: 'FORBIDDEN',
      query: 'mutation($i: SignupWithInviteInput!) { signupWithInvite(input: $i) { csrfToken } }',
      // This server takes new accounts only with a device key (SVC_SIGNUP_REQUIRE_KEYS).
      vars: () => ({ i: { username: 'described-new', password: 'a long enough password' } }),
      as: () => null,
    },
    {
      field: 'updateProfile',
      code: 'VALIDATION',
      query: 'mutation($i: UpdateProfileInput!) { updateProfile(input: $i) { id } }',
      vars: () => ({ i: { displayName: 'x'.repeat(65) } }),
      as: () => member,
    },
    {
      field: 'instanceInvites',
      code: 'FORBIDDEN',
      query: '{ instanceInvites { id } }',
      vars: () => ({}),
      as: () => member,
    },
    {
      field: 'createInstanceInvite',
      code: 'FORBIDDEN',
      query: 'mutation { createInstanceInvite { token } }',
      vars: () => ({}),
      as: () => member,
    },
    {
      field: 'revokeInstanceInvite',
      code: 'FORBIDDEN',
      query: 'mutation($i: ID!) { revokeInstanceInvite(id: $i) }',
      vars: () => ({ i: NIL }),
      as: () => member,
    },
    {
      field: 'revokeDevice',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { revokeDevice(deviceId: $i) }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'cancelDeviceLink',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { cancelDeviceLink(offerId: $i, offerSecret: "not-it") }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'cancelDeviceLink',
      code: 'UNAUTHENTICATED',
      query: 'mutation($i: ID!) { cancelDeviceLink(offerId: $i) }',
      vars: () => ({ i: NIL }),
      as: () => null,
    },
    {
      field: 'approveDeviceLink',
      code: 'FORBIDDEN',
      query: 'mutation($i: ApproveDeviceLinkInput!) { approveDeviceLink(input: $i) { id } }',
      vars: () => ({ i: { offerId: NIL, code: 'ABCD-EFGH' } }),
      as: () => owner,
    },
    {
      field: 'mlsCommits',
      code: 'NOT_FOUND',
      query:
        'query($c: ID!) { mlsCommits(conversationId: $c, incarnation: 1, fromEpoch: 0) { hasMore } }',
      vars: () => ({ c: NIL }),
      as: () => outsider,
    },
    {
      field: 'claimKeyPackages',
      code: 'NOT_FOUND',
      query:
        'mutation($c: ID!, $u: ID!) { claimKeyPackages(conversationId: $c, userId: $u) { deviceId } }',
      vars: () => ({ c: NIL, u: member.id }),
      as: () => outsider,
    },
    {
      field: 'sendEncryptedMessage',
      code: 'VALIDATION',
      query: 'mutation($i: SendEncryptedMessageInput!) { sendEncryptedMessage(input: $i) { id } }',
      vars: () => ({
        i: {
          conversationId: general,
          incarnation: 1,
          epoch: 0,
          ciphertext: 'AAAA',
          frankingCommitment: 'AAAA',
        },
      }),
      as: () => owner,
    },
    {
      field: 'addWorkspacePlugin',
      code: 'FORBIDDEN',
      query: 'mutation($i: AddWorkspacePluginInput!) { addWorkspacePlugin(input: $i) { id } }',
      vars: () => ({ i: { serverId, bundleSha256: '0'.repeat(64) } }),
      as: () => member,
    },
    {
      field: 'updateWorkspacePlugin',
      code: 'NOT_FOUND',
      query:
        'mutation($i: UpdateWorkspacePluginInput!) { updateWorkspacePlugin(input: $i) { id } }',
      vars: () => ({ i: { id: NIL, enabled: false } }),
      as: () => owner,
    },
    {
      field: 'removeWorkspacePlugin',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { removeWorkspacePlugin(id: $i) { id } }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'createCustomEmoji',
      code: 'FORBIDDEN',
      query: 'mutation($i: CreateCustomEmojiInput!) { createCustomEmoji(input: $i) { id } }',
      vars: () => ({
        i: { serverId, name: 'described', contentType: 'image/png', image: 'AAAA' },
      }),
      as: () => member,
    },
    {
      field: 'deleteCustomEmoji',
      code: 'FORBIDDEN',
      query: 'mutation($s: ID!) { deleteCustomEmoji(serverId: $s, name: "described") }',
      vars: () => ({ s: serverId }),
      as: () => member,
    },
    {
      field: 'renameChannel',
      code: 'NOT_FOUND',
      query: 'mutation($c: ID!) { renameChannel(conversationId: $c, name: "renamed") { id } }',
      vars: () => ({ c: general }),
      as: () => outsider,
    },
    {
      field: 'renameChannel',
      code: 'CONFLICT',
      query: 'mutation($c: ID!) { renameChannel(conversationId: $c, name: "random") { id } }',
      vars: () => ({ c: general }),
      as: () => owner,
    },
    {
      field: 'setChannelTopic',
      code: 'VALIDATION',
      query:
        'mutation($c: ID!, $t: String) { setChannelTopic(conversationId: $c, topic: $t) { id } }',
      vars: () => ({ c: general, t: 'x'.repeat(251) }),
      as: () => owner,
    },
    {
      field: 'unarchiveChannel',
      code: 'FORBIDDEN',
      query: 'mutation($c: ID!) { unarchiveChannel(conversationId: $c) { id } }',
      vars: () => ({ c: general }),
      as: () => member,
    },
    {
      field: 'leaveChannel',
      code: 'NOT_FOUND',
      query: 'mutation($c: ID!) { leaveChannel(conversationId: $c) }',
      vars: () => ({ c: NIL }),
      as: () => owner,
    },
    {
      field: 'removeChannelMember',
      code: 'FORBIDDEN',
      query: 'mutation($c: ID!, $u: ID!) { removeChannelMember(conversationId: $c, userId: $u) }',
      vars: () => ({ c: general, u: owner.id }),
      as: () => member,
    },
    {
      field: 'blockUser',
      code: 'VALIDATION',
      query: 'mutation($u: ID!) { blockUser(userId: $u) }',
      vars: () => ({ u: owner.id }),
      as: () => owner,
    },
    {
      field: 'blockUser',
      code: 'NOT_FOUND',
      query: 'mutation($u: ID!) { blockUser(userId: $u) }',
      vars: () => ({ u: NIL }),
      as: () => owner,
    },
    {
      field: 'threadReplies',
      code: 'NOT_FOUND',
      query: 'query($m: ID!) { threadReplies(messageId: $m) { hasMore } }',
      vars: () => ({ m: NIL }),
      as: () => owner,
    },
    {
      field: 'pinnedMessages',
      code: 'NOT_FOUND',
      query: 'query($c: ID!) { pinnedMessages(conversationId: $c) { id } }',
      vars: () => ({ c: general }),
      as: () => outsider,
    },
    {
      field: 'removeReaction',
      code: 'VALIDATION',
      query: 'mutation($m: ID!) { removeReaction(messageId: $m, emoji: "") { id } }',
      vars: () => ({ m: mine }),
      as: () => owner,
    },
    {
      field: 'unpinMessage',
      code: 'NOT_FOUND',
      query: 'mutation($m: ID!) { unpinMessage(messageId: $m) { id } }',
      vars: () => ({ m: mine }),
      as: () => outsider,
    },
    {
      field: 'markRead',
      code: 'NOT_FOUND',
      query: 'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
      vars: () => ({ c: general, m: NIL }),
      as: () => owner,
    },
    {
      field: 'reportUser',
      code: 'VALIDATION',
      query: 'mutation($u: ID!) { reportUser(userId: $u, category: SPAM) { id } }',
      vars: () => ({ u: owner.id }),
      as: () => owner,
    },
    {
      field: 'reportWorkspace',
      code: 'NOT_FOUND',
      query: 'mutation($s: ID!) { reportWorkspace(serverId: $s, category: SPAM) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'setChannelMentionPolicy',
      code: 'FORBIDDEN',
      query: 'mutation($s: ID!) { setChannelMentionPolicy(serverId: $s, policy: EVERYONE) }',
      vars: () => ({ s: serverId }),
      as: () => member,
    },
    {
      field: 'markNotificationRead',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { markNotificationRead(id: $i) { id } }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'registerPushSubscription',
      code: 'VALIDATION',
      query: 'mutation($i: PushSubscriptionInput!) { registerPushSubscription(input: $i) }',
      vars: () => ({ i: { endpoint: 'http://push.example/x', p256dh: 'x', auth: 'x' } }),
      as: () => owner,
    },
    {
      field: 'notifications',
      code: 'VALIDATION',
      query: '{ notifications(limit: 0) { hasMore } }',
      vars: () => ({}),
      as: () => owner,
    },
    {
      field: 'updateWorkspace',
      code: 'FORBIDDEN',
      query: 'mutation($i: UpdateWorkspaceInput!) { updateWorkspace(input: $i) { id } }',
      vars: () => ({ i: { serverId, name: 'taken over' } }),
      as: () => member,
    },
    {
      field: 'removeWorkspaceMember',
      code: 'FORBIDDEN',
      query: 'mutation($s: ID!, $u: ID!) { removeWorkspaceMember(serverId: $s, userId: $u) }',
      vars: () => ({ s: serverId, u: owner.id }),
      as: () => member,
    },
    {
      field: 'removeWorkspaceMember',
      code: 'NOT_FOUND',
      query: 'mutation($s: ID!, $u: ID!) { removeWorkspaceMember(serverId: $s, userId: $u) }',
      vars: () => ({ s: serverId, u: outsider.id }),
      as: () => owner,
    },
    {
      field: 'clearTimeout',
      code: 'NOT_FOUND',
      query: 'mutation($s: ID!, $u: ID!) { clearTimeout(serverId: $s, userId: $u) { role } }',
      vars: () => ({ s: serverId, u: outsider.id }),
      as: () => owner,
    },
    {
      field: 'revokeWorkspaceInvite',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { revokeWorkspaceInvite(inviteId: $i) { id } }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'instanceReports',
      code: 'FORBIDDEN',
      query: '{ instanceReports { id } }',
      vars: () => ({}),
      as: () => member,
    },
    {
      field: 'instancePrincipalBlocks',
      code: 'FORBIDDEN',
      query: '{ instancePrincipalBlocks { principalId } }',
      vars: () => ({}),
      as: () => member,
    },
    {
      field: 'instanceIpBlocks',
      code: 'FORBIDDEN',
      query: '{ instanceIpBlocks { cidr } }',
      vars: () => ({}),
      as: () => member,
    },
    {
      field: 'instanceAuditLog',
      code: 'FORBIDDEN',
      query: '{ instanceAuditLog { nextCursor } }',
      vars: () => ({}),
      as: () => member,
    },
    {
      field: 'channels',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { channels(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'searchChannels',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { searchChannels(serverId: $s, query: "gen") { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'searchWorkspaces',
      code: 'VALIDATION',
      query: '{ searchWorkspaces(query: "des", limit: 0) { id } }',
      vars: () => ({}),
      as: () => owner,
    },
    {
      field: 'markConversationNotificationsRead',
      code: 'NOT_FOUND',
      query: 'mutation($c: ID!) { markConversationNotificationsRead(conversationId: $c) }',
      vars: () => ({ c: NIL }),
      as: () => owner,
    },
    {
      field: 'workspaceInvites',
      code: 'NOT_FOUND',
      query: 'query($s: ID!) { workspaceInvites(serverId: $s) { id } }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'messages',
      code: 'NOT_FOUND',
      query: 'query($c: ID!) { messages(conversationId: $c) { hasMore } }',
      vars: () => ({ c: NIL }),
      as: () => outsider,
    },
    {
      field: 'conversation',
      code: 'NOT_FOUND',
      query: 'query($c: ID!) { conversation(id: $c) { id } }',
      vars: () => ({ c: NIL }),
      as: () => outsider,
    },
  ];

  for (const [n, c] of cases.entries()) {
    it(`${c.field} describes and answers ${c.code} (case ${n + 1})`, async () => {
      expect(descriptions.get(c.field)).toMatch(new RegExp(`\\b${c.code}\\b`));
      const res = await t.gql(c.query, c.vars(), c.as());
      const errors = res.body.errors as Array<{ extensions?: { code?: string } }> | undefined;
      expect(errors?.[0]?.extensions?.code, JSON.stringify(res.body)).toBe(c.code);
    });
  }
});
