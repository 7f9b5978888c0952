import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { DAY_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import {
  CONVERSATION_FIELDS,
  conversationOf,
  createConversation,
  createWorkspace,
  expectCode,
  giveDevice,
  inviteAndJoin,
  ok,
  recordUser,
  sendRaw,
} from './_helpers.js';

const ACCEPT = `mutation($s: ID!, $c: ID!) { acceptConversationInvite(serverId: $s, conversationId: $c) {
  ${CONVERSATION_FIELDS} } }`;
const DECLINE = `mutation($s: ID!, $c: ID!) { declineConversationInvite(serverId: $s, conversationId: $c) }`;
const INBOX = `query { inboxConversations { items { id kind isMember mlsGroup unreadCount pendingMemberIds
  memberIds lastMessage { id } } } }`;
const MESSAGES = 'query($c: ID!) { messages(conversationId: $c) { items { id } } }';
const CONVERSATION = 'query($c: ID!) { conversation(id: $c) { id } }';
const ADD = `mutation($i: AddConversationMembersInput!) { addConversationMembers(input: $i) {
  memberIds pendingMemberIds } }`;

/** The inbox without the workspace's channels. */
const dms = (items: Array<{ kind: string }>) => items.filter((i) => i.kind !== 'CHANNEL');

describe('encrypted conversations and their invitations', () => {
  const clock = new ManualClock(Date.parse('2030-05-01T00:00:00Z'));
  let t: TestApp;
  // Everyone shares a workspace; alice and bob have devices set up for encryption.
  let alice: Agent, bob: Agent, carol: Agent, dave: Agent, erin: Agent;

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: { SVC_LIMIT_PENDING_INVITES_PER_USER: '2', SVC_SESSION_TTL_DAYS: '365' },
    });
    [alice, bob, carol, dave, erin] = await Promise.all(
      ['alice', 'bob', 'carol', 'dave', 'erin'].map((u) => signUpAndIn(t, { username: `${u}e2e` })),
    );
    const ws = await createWorkspace(t, alice, 'Crypto');
    await inviteAndJoin(t, alice, ws.id, [bob, carol, dave, erin]);
    await giveDevice(t, alice.id);
    await giveDevice(t, bob.id);
  });
  afterAll(async () => t?.close());

  it('needs a creator with a device set up for encryption', async () => {
    const res = expectCode(
      await createConversation(t, carol, [alice.id], { encrypted: true }),
      'VALIDATION',
    );
    expect(res.message).toMatch(/device/);
  });

  it('invites people without a device as pending: listed, told, but unable to read or send', async () => {
    const carolEvents = recordUser(t, carol.id);
    const made = await conversationOf(t, alice, [bob, carol], { encrypted: true });
    const c = made.conversation;
    expect(c).toMatchObject({
      kind: 'GROUP',
      encrypted: true,
      memberCount: 2,
      pendingMemberIds: [carol.id],
      isMember: true,
      mlsGroup: c.id,
    });
    expect([...c.memberIds].sort()).toEqual([alice.id, bob.id].sort());
    const added = carolEvents.ofType('MemberAddedToConversation');
    expect(added).toHaveLength(1);
    expect(added[0]!.payload).toMatchObject({
      conversationId: c.id,
      userId: carol.id,
      state: 'pending',
    });

    const inbox = dms(ok(await t.gql(INBOX, {}, carol)).inboxConversations.items);
    expect(inbox).toEqual([
      expect.objectContaining({
        id: c.id,
        isMember: false,
        mlsGroup: null,
        unreadCount: 0,
        lastMessage: null,
      }),
    ]);
    expectCode(await t.gql(MESSAGES, { c: c.id }, carol), 'FORBIDDEN');
    expectCode(await t.gql(CONVERSATION, { c: c.id }, carol), 'FORBIDDEN');
    expectCode(await sendRaw(t, carol, c.id, 'let me in'), 'FORBIDDEN');
    // Plain text cannot go into an encrypted conversation.
    expectCode(await sendRaw(t, alice, c.id, 'plain'), 'VALIDATION');

    // Accepting needs a device; without an invitation, or in another space, NOT_FOUND.
    expectCode(await t.gql(ACCEPT, { s: DIRECT_SPACE_ID, c: c.id }, carol), 'VALIDATION');
    expectCode(await t.gql(ACCEPT, { s: DIRECT_SPACE_ID, c: c.id }, dave), 'NOT_FOUND');
    expectCode(await t.gql(DECLINE, { s: DIRECT_SPACE_ID, c: c.id }, dave), 'NOT_FOUND');
    expectCode(await t.gql(ACCEPT, { s: alice.id, c: c.id }, carol), 'NOT_FOUND');

    await giveDevice(t, carol.id);
    const aliceEvents = recordUser(t, alice.id);
    const accepted = ok(
      await t.gql(ACCEPT, { s: DIRECT_SPACE_ID, c: c.id }, carol),
    ).acceptConversationInvite;
    expect(accepted).toMatchObject({
      isMember: true,
      mlsGroup: c.id,
      pendingMemberIds: [],
      memberCount: 3,
    });
    expect(aliceEvents.ofType('MemberAddedToConversation')[0]!.payload).toMatchObject({
      userId: carol.id,
      state: 'member',
    });
    expect(aliceEvents.ofType('MlsMembershipChanged')[0]!.payload).toMatchObject({
      conversationId: c.id,
      added: [carol.id],
    });
    // Accepting again changes nothing and tells nobody.
    aliceEvents.clear();
    ok(await t.gql(ACCEPT, { s: DIRECT_SPACE_ID, c: c.id }, carol));
    expect(aliceEvents.events).toHaveLength(0);
    expect(ok(await t.gql(MESSAGES, { c: c.id }, carol)).messages.items).toEqual([]);
    aliceEvents.stop();
    carolEvents.stop();
  });

  it('declines, expires after 30 days, and adds pending members to an encrypted group', async () => {
    const a = (await conversationOf(t, alice, [bob, dave], { encrypted: true })).conversation;
    expect(
      ok(await t.gql(DECLINE, { s: DIRECT_SPACE_ID, c: a.id }, dave)).declineConversationInvite,
    ).toBe(true);
    expectCode(await t.gql(DECLINE, { s: DIRECT_SPACE_ID, c: a.id }, dave), 'NOT_FOUND');
    expect(dms(ok(await t.gql(INBOX, {}, dave)).inboxConversations.items)).toEqual([]);

    // Added again, as pending, by a member.
    const re = ok(await t.gql(ADD, { i: { conversationId: a.id, memberIds: [dave.id] } }, bob));
    expect(re.addConversationMembers.pendingMemberIds).toEqual([dave.id]);
    clock.advance(30 * DAY_MS);
    expect(dms(ok(await t.gql(INBOX, {}, dave)).inboxConversations.items)).toEqual([]);
    await giveDevice(t, dave.id);
    expectCode(await t.gql(ACCEPT, { s: DIRECT_SPACE_ID, c: a.id }, dave), 'NOT_FOUND');
    expect(await t.ctx.services.conversations.invitations.purgeExpiredInvites()).toBe(1);
    // With a device now, adding makes dave a member at once.
    const added = ok(await t.gql(ADD, { i: { conversationId: a.id, memberIds: [dave.id] } }, bob));
    expect(added.addConversationMembers.memberIds).toContain(dave.id);
  });

  it('refuses the whole create or add when an invitee holds the cap of pending invitations', async () => {
    await conversationOf(t, alice, [bob, erin], { encrypted: true });
    await conversationOf(t, bob, [erin], { encrypted: true });
    const before = await t.ctx.db.kysely.selectFrom('conversation').select('id').execute();
    const refused = expectCode(
      await createConversation(t, alice, [bob.id, erin.id], { encrypted: true }),
      'VALIDATION',
    );
    expect(refused.message).toMatch(/SVC_LIMIT_PENDING_INVITES_PER_USER/);
    expect(refused.extensions!.limit).toBe(2);
    const after = await t.ctx.db.kysely.selectFrom('conversation').select('id').execute();
    expect(after).toHaveLength(before.length);

    const group = (await conversationOf(t, alice, [bob, carol], { encrypted: true })).conversation;
    expectCode(
      await t.gql(ADD, { i: { conversationId: group.id, memberIds: [dave.id, erin.id] } }, alice),
      'VALIDATION',
    );
    const members = ok(await t.gql(INBOX, {}, alice)).inboxConversations.items.find(
      (i: { id: string }) => i.id === group.id,
    );
    // dave (who has a device) was not added either: the whole add was refused.
    expect(members.memberIds).not.toContain(dave.id);
    expect(members.pendingMemberIds).toEqual([]);
  });

  it('keeps a separate DIRECT conversation per encryption mode, and does not grow a DIRECT one', async () => {
    const plain = (await conversationOf(t, alice, [bob])).conversation;
    const secret = (await conversationOf(t, alice, [bob], { encrypted: true })).conversation;
    expect(secret.id).not.toBe(plain.id);
    expect((await conversationOf(t, bob, [alice], { encrypted: true })).conversation.id).toBe(
      secret.id,
    );
    expectCode(
      await t.gql(ADD, { i: { conversationId: plain.id, memberIds: [carol.id] } }, alice),
      'VALIDATION',
    );
    // Not a member: NOT_FOUND, whatever the conversation.
    expectCode(
      await t.gql(ADD, { i: { conversationId: plain.id, memberIds: [carol.id] } }, dave),
      'NOT_FOUND',
    );
  });
});
