import { afterAll, beforeAll, describe } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import {
  itAnswersAsDescribed,
  NIL,
  rootDescriptions,
  type RefusalCase,
} from '../_util/described-refusals.js';
import { signUpAndIn } from '../_util/seed.js';

import { conversationOf, createWorkspace, giveDevice, inviteAndJoin, ok } from './_helpers.js';

// SDL descriptions of the conversation, DM, file and command mutations say what the server does
// (issue 40, item 10; the rest of the root fields in test/foundation/described-refusals*.test.ts):
// each refusal below is named in the description of the field that gives it, and the field
// gives it to a caller who must be refused.

const CREATE = `mutation($i: CreateConversationInput!) { createConversation(input: $i) {
  conversation { id } } }`;
const ADD = `mutation($i: AddConversationMembersInput!) { addConversationMembers(input: $i) { id } }`;
const EXEC = `mutation($i: ExecuteCommandInput!) { executeCommand(input: $i) { status } }`;

describe('refusals the SDL describes: conversations, DM requests, files, commands', () => {
  let t: TestApp;
  let owner: Agent;
  let member: Agent;
  let second: Agent;
  let stranger: Agent;
  let serverId = '';
  let general = '';
  let group = '';
  let attachment = '';
  let sent = '';
  let keybind = '';
  let encrypted = '';
  let descriptions = new Map<string, string>();

  beforeAll(async () => {
    // The operator's floor keeps partners on this server, so a looser choice is refused.
    t = await createTestApp({ env: { SVC_DM_PARTNERS: 'this_server' } });
    owner = await signUpAndIn(t);
    member = await signUpAndIn(t);
    second = await signUpAndIn(t);
    stranger = await signUpAndIn(t);
    serverId = (await createWorkspace(t, owner, 'described-conversations')).id;
    await inviteAndJoin(t, owner, serverId, [member, second]);
    const chans = ok(
      await t.gql('query($s: ID!) { channels(serverId: $s) { id name } }', { s: serverId }, owner),
    ).channels as Array<{ id: string; name: string }>;
    general = chans.find((c) => c.name === 'general')!.id;
    group = (await conversationOf(t, owner, [member, second])).conversation.id as string;
    // An attachment started in #general and never uploaded, and a message to finalize it on.
    attachment = ok(
      await t.gql(
        `mutation($i: CreateAttachmentInput!) { createAttachment(input: $i) { attachmentId } }`,
        { i: { conversationId: general, fileName: 'notes.txt' } },
        owner,
      ),
    ).createAttachment.attachmentId as string;
    sent = ok(
      await t.gql(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        { i: { conversationId: general, text: 'with a file to come' } },
        owner,
      ),
    ).sendMessage.id as string;
    // A default keybind of the workspace, set by its owner.
    keybind = ok(
      await t.gql(
        'mutation($i: SetKeybindInput!) { setKeybind(input: $i) { id } }',
        { i: { serverId, chord: 'Ctrl+Alt+J', command: 'me', args: { text: 'hello' } } },
        owner,
      ),
    ).setKeybind.id as string;
    // An encrypted group: the owner and member have devices, the second person is invited.
    await giveDevice(t, owner.id);
    await giveDevice(t, member.id);
    encrypted = (await conversationOf(t, owner, [member, second], { encrypted: true })).conversation
      .id as string;
    descriptions = await rootDescriptions(t, owner);
  });
  afterAll(async () => t?.close());

  const cases: RefusalCase[] = [
    {
      field: 'createConversation',
      code: 'NOT_FOUND',
      query: CREATE,
      vars: () => ({ i: { memberIds: [NIL] } }),
      as: () => owner,
    },
    {
      field: 'createConversation',
      code: 'VALIDATION',
      query: CREATE,
      // Only the caller: nobody to talk with.
      vars: () => ({ i: { memberIds: [owner.id] } }),
      as: () => owner,
    },
    {
      field: 'createConversation',
      code: 'VALIDATION',
      query: CREATE,
      vars: () => ({ i: { memberIds: [member.id, second.id], name: 'n'.repeat(101) } }),
      as: () => owner,
    },
    {
      field: 'createConversation',
      code: 'FORBIDDEN',
      query: CREATE,
      // A group with someone the caller shares no workspace with (a DM request's case).
      vars: () => ({ i: { memberIds: [member.id, stranger.id] } }),
      as: () => owner,
    },
    {
      field: 'addConversationMembers',
      code: 'NOT_FOUND',
      query: ADD,
      vars: () => ({ i: { conversationId: NIL, memberIds: [member.id] } }),
      as: () => owner,
    },
    {
      field: 'addConversationMembers',
      code: 'NOT_FOUND',
      query: ADD,
      // Someone outside the group cannot see it.
      vars: () => ({ i: { conversationId: group, memberIds: [stranger.id] } }),
      as: () => stranger,
    },
    {
      field: 'addConversationMembers',
      code: 'NOT_FOUND',
      query: ADD,
      vars: () => ({ i: { conversationId: group, memberIds: [NIL] } }),
      as: () => owner,
    },
    {
      field: 'addConversationMembers',
      code: 'VALIDATION',
      query: ADD,
      vars: () => ({ i: { conversationId: general, memberIds: [member.id] } }),
      as: () => owner,
    },
    {
      field: 'addConversationMembers',
      code: 'VALIDATION',
      query: ADD,
      vars: () => ({ i: { conversationId: group, memberIds: [] } }),
      as: () => owner,
    },
    {
      field: 'addConversationMembers',
      code: 'FORBIDDEN',
      query: ADD,
      vars: () => ({ i: { conversationId: group, memberIds: [stranger.id] } }),
      as: () => owner,
    },
    {
      field: 'finalizeAttachment',
      code: 'VALIDATION',
      query: 'mutation($i: FinalizeAttachmentInput!) { finalizeAttachment(input: $i) { id } }',
      // Not uploaded yet.
      vars: () => ({ i: { attachmentId: attachment, messageId: sent } }),
      as: () => owner,
    },
    {
      field: 'declineDmRequest',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { declineDmRequest(requestId: $i) }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'executeCommand',
      code: 'VALIDATION',
      query: EXEC,
      vars: () => ({
        i: {
          command: 'me',
          args: { text: 12 },
          context: { serverId, conversationId: general },
        },
      }),
      as: () => member,
    },
    {
      field: 'executeCommand',
      code: 'FORBIDDEN',
      query: EXEC,
      // Kicking is the staff's.
      vars: () => ({
        i: {
          command: 'kick',
          args: { user: owner.id },
          context: { serverId, conversationId: general },
        },
      }),
      as: () => member,
    },
    {
      field: 'executeMacro',
      code: 'NOT_FOUND',
      query: 'mutation($i: ExecuteMacroInput!) { executeMacro(input: $i) { status } }',
      vars: () => ({ i: { macroId: NIL, context: { serverId, conversationId: general } } }),
      as: () => member,
    },
    {
      field: 'setKeybind',
      code: 'VALIDATION',
      query: 'mutation($i: SetKeybindInput!) { setKeybind(input: $i) { id } }',
      vars: () => ({ i: { chord: 'Ctrl+Alt+K', command: 'no-such-command' } }),
      as: () => member,
    },
    {
      field: 'createMacro',
      code: 'FORBIDDEN',
      query: 'mutation($i: CreateMacroInput!) { createMacro(input: $i) { id } }',
      // A workspace's macro is its staff's to make.
      vars: () => ({
        i: { serverId, name: 'greet', steps: [{ command: 'me', args: { text: 'hi' } }] },
      }),
      as: () => member,
    },
    {
      field: 'deleteKeybind',
      code: 'FORBIDDEN',
      query: 'mutation($i: ID!) { deleteKeybind(id: $i) }',
      vars: () => ({ i: keybind }),
      as: () => member,
    },
    {
      field: 'createPipeline',
      code: 'FORBIDDEN',
      query: 'mutation($i: CreatePipelineInput!) { createPipeline(input: $i) { id } }',
      vars: () => ({
        i: {
          serverId,
          name: 'echo',
          trigger: { kind: 'MESSAGE', pattern: 'never-said', channelIds: [general] },
          channelId: general,
          steps: [{ command: 'me', args: { text: 'echo' } }],
        },
      }),
      as: () => member,
    },
    {
      field: 'setPipelineEnabled',
      code: 'NOT_FOUND',
      query: 'mutation($i: ID!) { setPipelineEnabled(id: $i, enabled: false) { id } }',
      vars: () => ({ i: NIL }),
      as: () => owner,
    },
    {
      field: 'conversation',
      code: 'FORBIDDEN',
      query: 'query($c: ID!) { conversation(id: $c) { id } }',
      // Invited to the encrypted group, not yet accepted.
      vars: () => ({ c: encrypted }),
      as: () => second,
    },
    {
      field: 'updateDmSettings',
      code: 'VALIDATION',
      query: 'mutation($i: UpdateDmSettingsInput!) { updateDmSettings(input: $i) { partners } }',
      vars: () => ({ i: { partners: 'ANY_SERVER' } }),
      as: () => member,
    },
  ];

  itAnswersAsDescribed(
    cases,
    () => t,
    () => descriptions,
  );
});
