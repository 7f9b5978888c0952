import { randomBytes } from 'node:crypto';

import { expect } from 'vitest';

import type { DelegatedActor, UserActor } from '../../src/auth/actor.js';
import {
  agentHeaders,
  createTestApp,
  type Agent,
  type GqlResponse,
  type TestApp,
  type TestDatabase,
} from './app.js';
import { signUpAndIn } from './seed.js';
import { MlsDevice } from '../e2ee/_client.js';
import { multipart, makeImage } from '../files/_image-upload.js';
import { exampleBundleText } from '../plugins/_bundles.js';
import { ADD as ADD_PLUGIN, uploadBundle } from '../plugins/_helpers.js';
import { challenge, newKey, nowIso, signText, statement } from '../devices/_keys.js';

// A populated world: every kind of object the schema has, and every kind of person who may or
// may not read it. Built through the public API (GraphQL and the file routes) as clients would,
// on the test's database (SQLite or PostgreSQL). The whole-schema walk reads it; the
// authorization matrix reuses it.

/** The kinds of people the world holds, each with a signed-in session (but `agent`). */
export const PERSON_KINDS = [
  'owner',
  'moderator',
  'member',
  'guest',
  'pendingInvitee',
  'stranger',
  'operator',
  'removed',
] as const;
export type PersonKind = (typeof PERSON_KINDS)[number];

export interface World {
  t: TestApp;
  people: Record<PersonKind, Agent>;
  /**
   * An agent acting for `member` (as `svc mcp` and executeCommand's AGENT initiator do): not a
   * GraphQL caller, a service-level actor with its grant.
   */
  agent: DelegatedActor;
  /**
   * What a reader of the encrypted message decrypted (its body and franking opening key): the
   * reveal a report of it carries.
   */
  encryptedReveal: { plaintext: string; opening: string };
  /** Ids of the world's objects. */
  ids: {
    workspace: string;
    general: string;
    random: string;
    privateChannel: string;
    archivedChannel: string;
    direct: string;
    group: string;
    encrypted: string;
    /** A DIRECT conversation a stranger opened with a DM request to the owner. */
    requested: string;
    message: string;
    threadReply: string;
    encryptedMessage: string;
    attachment: string;
    macro: string;
    pipeline: string;
    keybind: string;
    plugin: string;
    workspaceInvite: string;
    instanceInvite: string;
    dmRequest: string;
    workspaceReport: string;
    instanceReport: string;
    deviceLinkOffer: string;
    deviceLinkOfferSecret: string;
    /** The incarnation and epoch the encrypted conversation's first Commit was made in. */
    mlsIncarnation: number;
  };
  /** GraphQL request as one of the people (or anonymously with null). */
  as(
    kind: PersonKind | null,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<GqlResponse>;
  close(): Promise<void>;
}

const ok = (res: GqlResponse, what: string): Record<string, any> => {
  expect(res.body.errors, `${what}: ${JSON.stringify(res.body.errors)}`).toBeUndefined();
  return res.body.data!;
};

/**
 * Builds the world on a fresh test app. `env` adds to the app's configuration; `database` builds
 * it there (kept on close) instead of on a fresh database of the run's kind.
 */
export async function buildWorld(
  env: Record<string, string> = {},
  opts: { database?: TestDatabase } = {},
): Promise<World> {
  // Partners from this server only: every person here is local, and the floor shows in
  // `myDmSettings.outsideFloorFrom`.
  const t = await createTestApp({
    env: { SVC_OPEN_REGISTRATION: 'true', SVC_DM_PARTNERS: 'this_server', ...env },
    database: opts.database,
  });
  const gql = (agent: Agent | null, query: string, variables: Record<string, unknown> = {}) =>
    t.gql(query, variables, agent);
  const run = async (agent: Agent, what: string, query: string, v: Record<string, unknown> = {}) =>
    ok(await gql(agent, query, v), what);

  // People. The owner and the member have device keys and MLS devices (encryption).
  const ownerDevice = await MlsDevice.signUp(t);
  const memberDevice = await MlsDevice.signUp(t);
  await ownerDevice.publish(2);
  await memberDevice.publish(2);
  const owner = ownerDevice.agent;
  const member = memberDevice.agent;
  const [moderator, guest, pendingInvitee, stranger, operator, removed] = await Promise.all([
    signUpAndIn(t),
    signUpAndIn(t),
    signUpAndIn(t),
    signUpAndIn(t),
    signUpAndIn(t, { operator: true }),
    signUpAndIn(t),
  ]);

  // The workspace, its members and roles, its channels.
  const ws = await run(
    owner,
    'createWorkspace',
    `mutation { createWorkspace(input: { name: "World", description: "everything" }) { id } }`,
  );
  const workspace = ws.createWorkspace.id as string;
  const channels = (
    await run(owner, 'channels', 'query($s: ID!) { channels(serverId: $s) { id name } }', {
      s: workspace,
    })
  ).channels as Array<{ id: string; name: string }>;
  const general = channels.find((c) => c.name === 'general')!.id;
  const random = channels.find((c) => c.name === 'random')!.id;
  const invite = async (extra: Record<string, unknown>) =>
    (
      await run(
        owner,
        'createWorkspaceInvite',
        'mutation($i: CreateWorkspaceInviteInput!) { createWorkspaceInvite(input: $i) { token invite { id } } }',
        { i: { serverId: workspace, ...extra } },
      )
    ).createWorkspaceInvite as { token: string; invite: { id: string } };
  const join = async (who: Agent, token: string) =>
    run(who, 'joinWorkspace', 'mutation($t: String!) { joinWorkspace(token: $t) { id } }', {
      t: token,
    });
  const everyone = await invite({ maxUses: 10 });
  for (const who of [moderator, member, pendingInvitee, removed]) await join(who, everyone.token);
  await join(guest, (await invite({ role: 'GUEST', channelIds: [general] })).token);
  const pendingInvite = await invite({ maxUses: 3, expiresInHours: 48 });
  await run(
    owner,
    'setMemberRole',
    'mutation($i: SetMemberRoleInput!) { setMemberRole(input: $i) { role } }',
    { i: { serverId: workspace, userId: moderator.id, role: 'MODERATOR' } },
  );
  const channel = async (name: string, isPrivate: boolean, memberIds: string[] = []) =>
    (
      await run(
        owner,
        'createChannel',
        'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
        { i: { serverId: workspace, name, topic: `about ${name}`, isPrivate, memberIds } },
      )
    ).createChannel.id as string;
  const privateChannel = await channel('secret', true, [moderator.id, member.id]);
  const archivedChannel = await channel('old', false);
  await run(
    owner,
    'archiveChannel',
    'mutation($c: ID!) { archiveChannel(conversationId: $c) { id } }',
    {
      c: archivedChannel,
    },
  );
  await run(
    owner,
    'setChannelMentionPolicy',
    'mutation($s: ID!) { setChannelMentionPolicy(serverId: $s, policy: MODERATORS) }',
    { s: workspace },
  );

  // Messages: a mention, a thread, reactions, a pin, an edit, a forward, a deletion, a file.
  const send = async (who: Agent, c: string, text: string, threadRootId?: string) =>
    (
      await run(
        who,
        'sendMessage',
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        { i: { conversationId: c, text, threadRootId } },
      )
    ).sendMessage.id as string;
  const message = await send(member, general, `hello @${owner.username}, the world is ready`);
  const threadReply = await send(moderator, general, 'a reply in the thread', message);
  await run(
    member,
    'addReaction',
    'mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }',
    {
      m: message,
    },
  );
  await run(owner, 'pinMessage', 'mutation($m: ID!) { pinMessage(messageId: $m) { id } }', {
    m: message,
  });
  const edited = await send(member, general, 'first words');
  await run(
    member,
    'editMessage',
    'mutation($m: ID!) { editMessage(messageId: $m, text: "second words") { id } }',
    {
      m: edited,
    },
  );
  await run(
    member,
    'forwardMessage',
    'mutation($m: ID!, $c: ID!) { forwardMessage(messageId: $m, toConversationId: $c) { id } }',
    { m: message, c: random },
  );
  const gone = await send(member, general, 'soon deleted');
  await run(member, 'deleteMessage', 'mutation($m: ID!) { deleteMessage(messageId: $m) { id } }', {
    m: gone,
  });
  await send(member, privateChannel, 'only for the private channel');
  await t.ctx.db.kysely
    .insertInto('link_preview')
    .values({
      messageId: message,
      position: 0,
      url: 'https://example.org/world',
      kind: 'page',
      title: 'The world',
      description: 'A page about the world',
      imageUrl: null,
      siteName: 'Example',
      mimeType: null,
      size: null,
      fetchedAt: t.ctx.clock.now().getTime(),
    })
    .execute();
  const attachment = await attach(t, member, general, run);

  // Conversations in the direct space, and an encrypted one with a pending invitee.
  const create = async (who: Agent, input: Record<string, unknown>) =>
    (
      await run(
        who,
        'createConversation',
        'mutation($i: CreateConversationInput!) { createConversation(input: $i) { conversation { id } dmRequestsSent { id } } }',
        { i: input },
      )
    ).createConversation as { conversation: { id: string }; dmRequestsSent: Array<{ id: string }> };
  const direct = (await create(owner, { memberIds: [member.id] })).conversation.id;
  await send(owner, direct, 'a direct word');
  const group = (await create(owner, { memberIds: [member.id, moderator.id] })).conversation.id;
  await send(moderator, group, 'a group word');
  const requestedConv = await create(stranger, { memberIds: [owner.id] });
  const requested = requestedConv.conversation.id;
  const dmRequest = requestedConv.dmRequestsSent[0]!.id;
  await send(stranger, requested, 'hello, may I write to you?');
  const encrypted = (
    await create(owner, { memberIds: [member.id, pendingInvitee.id], encrypted: true })
  ).conversation.id;
  await ownerDevice.createGroup(encrypted);
  ok(await ownerDevice.commit(encrypted, { addUsers: [member.id] }), 'commitMlsGroup');
  const opening = randomBytes(32);
  const encryptedMessage = ok(
    await ownerDevice.sendRaw(encrypted, 'a secret', { opening }),
    'sendEncryptedMessage',
  ).sendEncryptedMessage.id as string;
  const encryptedReveal = {
    plaintext: JSON.stringify({ text: 'a secret' }),
    opening: opening.toString('base64url'),
  };

  // Markers, notifications and presence.
  await run(
    member,
    'markRead',
    'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
    {
      c: general,
      m: message,
    },
  );
  await run(
    owner,
    'setNotificationRule',
    'mutation($i: NotificationRuleInput!) { setNotificationRule(input: $i) { level } }',
    { i: { serverId: workspace, level: 'MENTIONS' } },
  );
  await run(owner, 'setPresence', 'mutation { setPresence(choice: AWAY) { status } }');
  await run(
    stranger,
    'updateDmSettings',
    'mutation { updateDmSettings(input: { inbound: SHARED_WORKSPACE }) { inbound } }',
  );
  await run(member, 'blockUser', 'mutation($u: ID!) { blockUser(userId: $u) }', { u: stranger.id });

  // Automations: a command run (audited), a macro, a keybind, a pipeline; a plugin; an emoji.
  await run(
    owner,
    'executeCommand',
    'mutation($i: ExecuteCommandInput!) { executeCommand(input: $i) { status } }',
    {
      i: {
        command: 'topic',
        args: { topic: 'the world topic' },
        context: { serverId: workspace, conversationId: general },
      },
    },
  );
  const macro = (
    await run(
      owner,
      'createMacro',
      'mutation($i: CreateMacroInput!) { createMacro(input: $i) { id } }',
      {
        i: {
          serverId: workspace,
          name: 'greet',
          description: 'says hello',
          params: ['who'],
          steps: [{ command: 'me', args: { text: 'waves at {{who}}' } }],
        },
      },
    )
  ).createMacro.id as string;
  const keybind = (
    await run(
      owner,
      'setKeybind',
      'mutation($i: SetKeybindInput!) { setKeybind(input: $i) { id } }',
      {
        i: { serverId: workspace, chord: 'Ctrl+Shift+G', macroId: macro, args: { who: 'all' } },
      },
    )
  ).setKeybind.id as string;
  const pipeline = (
    await run(
      owner,
      'createPipeline',
      'mutation($i: CreatePipelineInput!) { createPipeline(input: $i) { id } }',
      {
        i: {
          serverId: workspace,
          name: 'echo',
          trigger: { kind: 'MESSAGE', pattern: 'deploy', channelIds: [general] },
          channelId: general,
          steps: [{ command: 'me', args: { text: 'noticed a deploy' } }],
        },
      },
    )
  ).createPipeline.id as string;
  const sha = await uploadBundle(t, owner, workspace, Buffer.from(exampleBundleText()));
  const plugin = (
    await run(owner, 'addWorkspacePlugin', ADD_PLUGIN, {
      i: { serverId: workspace, bundleSha256: sha },
    })
  ).addWorkspacePlugin.id as string;
  await run(
    owner,
    'createCustomEmoji',
    'mutation($i: CreateCustomEmojiInput!) { createCustomEmoji(input: $i) { name } }',
    {
      i: {
        serverId: workspace,
        name: 'world',
        contentType: 'image/png',
        image: (await makeImage('png', { width: 32, height: 32 })).toString('base64'),
      },
    },
  );

  // Moderation: reports in the workspace and to the instance, blocks, invites.
  const workspaceReport = (
    await run(
      member,
      'reportMessage',
      'mutation($m: ID!) { reportMessage(messageId: $m, category: SPAM, text: "looks like spam") { id } }',
      { m: threadReply },
    )
  ).reportMessage.id as string;
  const instanceReport = (
    await run(
      owner,
      'reportUser',
      'mutation($u: ID!) { reportUser(userId: $u, category: HARASSMENT, text: "keeps writing") { id } }',
      { u: stranger.id },
    )
  ).reportUser.id as string;
  await run(
    operator,
    'instanceBlockPrincipal',
    'mutation { instanceBlockPrincipal(principalId: "server:evil.example", reason: "spam server") { block { principalId } } }',
  );
  await run(
    operator,
    'instanceBlockIp',
    'mutation { instanceBlockIp(cidr: "203.0.113.0/24", reason: "abuse", expiresInDays: 7) { cidr } }',
  );
  const instanceInvite = (
    await run(
      operator,
      'createInstanceInvite',
      'mutation { createInstanceInvite(email: "new@example.org", expiresInDays: 7, maxUses: 1) { invite { id } } }',
    )
  ).createInstanceInvite.invite.id as string;

  // A device link offer waiting for the owner's approval.
  const device = newKey();
  const ch = await challenge(t);
  const issuedAt = nowIso(t);
  const offer = ok(
    await gql(
      null,
      'mutation($i: SendDeviceLinkOfferInput!) { sendDeviceLinkOffer(input: $i) { offerId offerSecret } }',
      {
        i: {
          username: owner.username,
          devicePublicKey: device.publicKey,
          deviceName: 'Tablet',
          challengeId: ch.challengeId,
          issuedAt,
          signature: signText(
            device,
            statement('device-link', ch, issuedAt, [
              ['username', owner.username],
              ['device', device.publicKey],
            ]),
          ),
        },
      },
    ),
    'sendDeviceLinkOffer',
  ).sendDeviceLinkOffer as { offerId: string; offerSecret: string };

  // Removed a moment ago: still signed in, no longer a member.
  await run(
    owner,
    'removeWorkspaceMember',
    'mutation($s: ID!, $u: ID!) { removeWorkspaceMember(serverId: $s, userId: $u) }',
    { s: workspace, u: removed.id },
  );

  // Notifications are written after the send's commit: wait for the owner's mention.
  for (let i = 0; i < 100; i++) {
    const n = await gql(owner, '{ notifications { items { id } } }');
    if ((n.body.data?.notifications.items.length ?? 0) > 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }

  const onBehalfOf: UserActor = {
    kind: 'user',
    accountId: member.id,
    sessionId: '',
    username: member.username,
    deviceId: null,
    homeServer: null,
    viaOperatorSession: false,
  };
  const people = { owner, moderator, member, guest, pendingInvitee, stranger, operator, removed };
  return {
    t,
    people,
    agent: { kind: 'agent', onBehalfOf, grant: { id: 'world-agent', actions: [] } },
    encryptedReveal,
    ids: {
      workspace,
      general,
      random,
      privateChannel,
      archivedChannel,
      direct,
      group,
      encrypted,
      requested,
      message,
      threadReply,
      encryptedMessage,
      attachment,
      macro,
      pipeline,
      keybind,
      plugin,
      workspaceInvite: pendingInvite.invite.id,
      instanceInvite,
      dmRequest,
      workspaceReport,
      instanceReport,
      deviceLinkOffer: offer.offerId,
      deviceLinkOfferSecret: offer.offerSecret,
      mlsIncarnation: 1,
    },
    as: (kind, query, variables = {}) => t.gql(query, variables, kind ? people[kind] : null),
    close: () => t.close(),
  };
}

/** A text attachment on a message of `conversationId`, uploaded and finalized. */
async function attach(
  t: TestApp,
  who: Agent,
  conversationId: string,
  run: (
    a: Agent,
    what: string,
    q: string,
    v?: Record<string, unknown>,
  ) => Promise<Record<string, any>>,
): Promise<string> {
  const created = (
    await run(
      who,
      'createAttachment',
      'mutation($c: ID!) { createAttachment(input: { conversationId: $c, fileName: "notes.txt", contentType: "text/plain" }) { attachmentId uploadToken } }',
      { c: conversationId },
    )
  ).createAttachment as { attachmentId: string; uploadToken: string };
  const form = multipart([
    { name: 'upload_token', value: created.uploadToken },
    { name: 'attachment_id', value: created.attachmentId },
    {
      name: 'file',
      bytes: Buffer.from('notes of the world\n'),
      filename: 'notes.txt',
      type: 'text/plain',
    },
  ]);
  const uploaded = await t.inject({
    method: 'POST',
    url: '/api/files/upload',
    headers: { 'content-type': form.contentType, ...agentHeaders(who) },
    payload: form.body,
  });
  expect(uploaded.statusCode, uploaded.body).toBe(200);
  const message = (
    await run(
      who,
      'sendMessage',
      'mutation($c: ID!) { sendMessage(input: { conversationId: $c, text: "the notes are attached" }) { id } }',
      { c: conversationId },
    )
  ).sendMessage.id as string;
  await run(
    who,
    'finalizeAttachment',
    'mutation($a: ID!, $m: ID!) { finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }',
    { a: created.attachmentId, m: message },
  );
  return created.attachmentId;
}
