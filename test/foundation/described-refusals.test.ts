import { afterAll, beforeAll, describe } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { itAnswersAsDescribed, NIL, type RefusalCase } from '../_util/described-refusals.js';

import { describedWorld } from './_described-world.js';

// SDL descriptions say what the server does (issue 40, item 10): each refusal below is named in
// the description of the field that gives it, and the field gives it. A description that stops
// naming a code its field answers, or a field that answers another code, fails here. This file:
// workspaces, channels, conversations, messages, notifications, search and moderation; accounts,
// devices, encryption, files, emoji, plugins and commands in described-refusals-accounts.test.ts,
// the conversation, DM and command mutations in test/conversations/described-refusals.test.ts.

describe('refusals the SDL describes: workspaces, messages, moderation', () => {
  let t: TestApp;
  let owner: Agent;
  let member: Agent;
  let outsider: Agent;
  let serverId = '';
  let direct = '';
  let general = '';
  let mine = '';
  let gone = '';
  let descriptions = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp();
    ({ owner, member, outsider, serverId, direct, general, mine, gone, descriptions } =
      await describedWorld(t));
  });
  afterAll(async () => t?.close());

  const cases: RefusalCase[] = [
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
      field: 'searchLanguage',
      code: 'NOT_FOUND',
      query: 'query($s: ID) { searchLanguage(serverId: $s) }',
      vars: () => ({ s: serverId }),
      as: () => outsider,
    },
    {
      field: 'startTyping',
      code: 'VALIDATION',
      query: 'mutation($c: ID!) { startTyping(conversationId: $c) }',
      vars: () => ({ c: general }),
      as: () => owner,
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

  itAnswersAsDescribed(
    cases,
    () => t,
    () => descriptions,
  );
});
