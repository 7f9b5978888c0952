import { getIntrospectionQuery, buildClientSchema, type IntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { conversationOf, createWorkspace, inviteAndJoin, ok } from './_helpers.js';

// SDL descriptions of the conversation, DM, file and command mutations say what the server does
// (issue 40, item 10; the rest of the root fields in test/foundation/described-refusals.test.ts):
// each refusal below is named in the description of the field that gives it, and the field
// gives it to a caller who must be refused.

const NIL = '0190d5c4-0000-7000-8000-000000000000';

interface Case {
  field: string;
  code: string;
  query: string;
  vars: () => Record<string, unknown>;
  as: () => Agent;
}

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
  const descriptions = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp();
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
