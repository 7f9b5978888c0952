import { afterAll, beforeAll, describe } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { itAnswersAsDescribed, NIL, type RefusalCase } from '../_util/described-refusals.js';

import { describedWorld } from './_described-world.js';

// SDL descriptions say what the server does (issue 40, item 10), as in described-refusals.test.ts
// beside this file. This file: accounts, sessions, devices, encryption, files, custom emoji,
// workspace plugins and commands (macros, keybinds, pipelines, their audit).

describe('refusals the SDL describes: accounts, devices, files, plugins, commands', () => {
  let t: TestApp;
  let owner: Agent;
  let member: Agent;
  let outsider: Agent;
  let serverId = '';
  let direct = '';
  let general = '';
  let mine = '';
  let descriptions = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp();
    ({ owner, member, outsider, serverId, direct, general, mine, descriptions } =
      await describedWorld(t));
  });
  afterAll(async () => t?.close());

  const cases: RefusalCase[] = [
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
      field: 'commandAudit',
      code: 'VALIDATION',
      query: 'query($s: ID!) { commandAudit(serverId: $s, limit: 201) { nextCursor } }',
      vars: () => ({ s: serverId }),
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
  ];

  itAnswersAsDescribed(
    cases,
    () => t,
    () => descriptions,
  );
});
