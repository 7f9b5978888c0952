import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import {
  conversationOf,
  createConversation,
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  recordUser,
  send,
  sendRaw,
} from './_helpers.js';

const REQUESTS = `query { dmRequests { id state conversationId from { id } to { id }
  preview { id text } } }`;
const ACCEPT = 'mutation($id: ID!) { acceptDmRequest(requestId: $id) { id memberIds isMember } }';
const DECLINE = 'mutation($id: ID!) { declineDmRequest(requestId: $id) }';
const MESSAGES = 'query($c: ID!) { messages(conversationId: $c) { items { id text } } }';
const INBOX = 'query { inboxConversations { items { id kind memberIds } } }';
const BLOCK = 'mutation($u: ID!) { blockUser(userId: $u) }';
const UNBLOCK = 'mutation($u: ID!) { unblockUser(userId: $u) }';
const SETTINGS = `query { myDmSettings { inbound outbound partners
  outsideFloorFrom { setting floor excludedChoices variable message } } }`;
const UPDATE = `mutation($i: UpdateDmSettingsInput!) { updateDmSettings(input: $i) { inbound outbound partners } }`;
const CONVERSATION_REQUEST =
  'query($id: ID!) { conversation(id: $id) { id dmRequest { id state to { id } } } }';

describe('direct and group conversations', () => {
  const clock = new ManualClock(Date.parse('2030-03-01T00:00:00Z'));
  let t: TestApp;
  // alice, bob and carol share a workspace; dave and erin are strangers to everyone.
  let alice: Agent, bob: Agent, carol: Agent, dave: Agent, erin: Agent, fred: Agent;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_LIMIT_DM_REQUESTS_PER_DAY: '2' } });
    [alice, bob, carol, dave, erin, fred] = await Promise.all(
      ['alice', 'bob', 'carol', 'dave', 'erin', 'fred'].map((u) =>
        signUpAndIn(t, { username: `${u}dm` }),
      ),
    );
    const ws = await createWorkspace(t, alice, 'Team');
    await inviteAndJoin(t, alice, ws.id, [bob, carol]);
  });
  afterAll(async () => t?.close());

  it('starts a DIRECT conversation with a workspace mate and reuses it from either side', async () => {
    const rec = recordUser(t, bob.id);
    const first = await conversationOf(t, alice, [bob]);
    expect(first.reused).toBe(false);
    expect(first.conversation).toMatchObject({
      serverId: DIRECT_SPACE_ID,
      kind: 'DIRECT',
      isPrivate: true,
      encrypted: false,
      memberCount: 2,
      pendingMemberIds: [],
      isMember: true,
      mlsGroup: null,
      unreadCount: 0,
      lastMessage: null,
    });
    expect([...first.conversation.memberIds].sort()).toEqual([alice.id, bob.id].sort());
    expect(rec.ofType('ConversationCreated')).toHaveLength(1);
    expect(rec.ofType('ConversationCreated')[0]!.payload).toMatchObject({
      conversationId: first.conversation.id,
      serverId: DIRECT_SPACE_ID,
      audience: { kind: 'conversation', conversationId: first.conversation.id },
      kind: 'direct',
    });
    rec.stop();

    const again = await conversationOf(t, bob, [alice]);
    expect(again).toMatchObject({ reused: true, conversation: { id: first.conversation.id } });
    // Naming oneself among the members changes nothing.
    const self = ok(await createConversation(t, alice, [bob.id, alice.id])).createConversation;
    expect(self.conversation.id).toBe(first.conversation.id);
    // Two at once still make one conversation.
    const [x, y] = await Promise.all([
      conversationOf(t, carol, [bob]),
      conversationOf(t, bob, [carol]),
    ]);
    expect(x.conversation.id).toBe(y.conversation.id);
  });

  it('starts a GROUP of three or more and refuses bad member lists', async () => {
    const g = await conversationOf(t, alice, [bob, carol], { name: '  Lunch  ' });
    expect(g.conversation).toMatchObject({ kind: 'GROUP', name: 'Lunch', memberCount: 3 });
    // A group is never reused: a second one is a new conversation.
    const g2 = await conversationOf(t, alice, [bob, carol]);
    expect(g2.conversation.id).not.toBe(g.conversation.id);
    expect(g2.conversation.name).toBeNull();

    expectCode(await createConversation(t, alice, []), 'VALIDATION');
    expectCode(await createConversation(t, alice, [alice.id]), 'VALIDATION');
    expectCode(await createConversation(t, alice, [newId()]), 'NOT_FOUND');
    expectCode(await createConversation(t, alice, ['not-an-id']), 'NOT_FOUND');
    expectCode(
      await createConversation(t, alice, [bob.id, carol.id], { name: 'x'.repeat(101) }),
      'VALIDATION',
    );
  });

  it('leaves a GROUP: the others hear it, the last one out deletes it; a DIRECT one refuses', async () => {
    const LEAVE = 'mutation($c: ID!) { leaveConversation(conversationId: $c) }';
    const CONV = 'query($c: ID!) { conversation(id: $c) { id memberCount } }';
    const g = (await conversationOf(t, alice, [bob, carol], { name: 'Leavers' })).conversation;
    const heard = recordUser(t, bob.id);
    expect(ok(await t.gql(LEAVE, { c: g.id }, carol)).leaveConversation).toBe(true);
    expect(
      heard.ofType('MemberRemovedFromConversation').some((e) => e.payload.userId === carol.id),
    ).toBe(true);
    expectCode(await t.gql(CONV, { c: g.id }, carol), 'NOT_FOUND');
    expect(ok(await t.gql(CONV, { c: g.id }, bob)).conversation.memberCount).toBe(2);
    // Not a member any more: NOT_FOUND, as for someone who never was.
    expectCode(await t.gql(LEAVE, { c: g.id }, carol), 'NOT_FOUND');
    expectCode(await t.gql(LEAVE, { c: g.id }, dave), 'NOT_FOUND');
    ok(await t.gql(LEAVE, { c: g.id }, bob));
    ok(await t.gql(LEAVE, { c: g.id }, alice));
    const left = await t.ctx.db.kysely
      .selectFrom('conversation')
      .select('id')
      .where('id', '=', g.id)
      .execute();
    expect(left).toHaveLength(0);
    const direct = (await conversationOf(t, alice, [bob])).conversation;
    expectCode(await t.gql(LEAVE, { c: direct.id }, alice), 'VALIDATION');
    expect(ok(await t.gql(CONV, { c: direct.id }, alice)).conversation.memberCount).toBe(2);
  });

  it('sends a stranger a DM request: the sender writes, the recipient reads it there and answers', async () => {
    const rec = recordUser(t, erin.id);
    const made = await conversationOf(t, dave, [erin]);
    expect(made.conversation.memberIds).toEqual([dave.id]);
    expect(made.dmRequestsSent).toHaveLength(1);
    expect(made.dmRequestsSent[0]).toMatchObject({ state: 'PENDING', to: { id: erin.id } });
    expect(rec.ofType('DmRequestReceived')).toHaveLength(1);
    expect(rec.ofType('DmRequestReceived')[0]!.payload).toMatchObject({
      fromId: dave.id,
      toId: erin.id,
      audience: { kind: 'users', userIds: [erin.id] },
    });
    const convId = made.conversation.id as string;
    await send(t, dave, convId, 'hello erin, we met at the conference');

    // The recipient is not in the conversation: it is hidden, but the request shows the messages.
    expectCode(await t.gql(MESSAGES, { c: convId }, erin), 'NOT_FOUND');
    expectCode(await sendRaw(t, erin, convId, 'hi'), 'NOT_FOUND');
    expect(ok(await t.gql(INBOX, {}, erin)).inboxConversations.items).toEqual([]);
    const reqs = ok(await t.gql(REQUESTS, {}, erin)).dmRequests;
    expect(reqs).toHaveLength(1);
    expect(reqs[0]).toMatchObject({
      state: 'PENDING',
      conversationId: convId,
      from: { id: dave.id },
      preview: [{ text: 'hello erin, we met at the conference' }],
    });
    // Asking again reuses the conversation and sends no second request.
    const again = await conversationOf(t, dave, [erin]);
    expect(again).toMatchObject({ reused: true, dmRequestsSent: [] });

    // Only the recipient answers.
    expectCode(await t.gql(ACCEPT, { id: reqs[0].id }, dave), 'NOT_FOUND');
    const daveEvents = recordUser(t, dave.id);
    const accepted = ok(await t.gql(ACCEPT, { id: reqs[0].id }, erin)).acceptDmRequest;
    expect(accepted.isMember).toBe(true);
    expect([...accepted.memberIds].sort()).toEqual([dave.id, erin.id].sort());
    expect(ok(await t.gql(MESSAGES, { c: convId }, erin)).messages.items).toHaveLength(1);
    expect(daveEvents.ofType('DmRequestAnswered')[0]!.payload).toMatchObject({
      requestId: reqs[0].id,
      state: 'accepted',
    });
    expect(daveEvents.ofType('MemberAddedToConversation')[0]!.payload).toMatchObject({
      userId: erin.id,
      state: 'member',
    });
    daveEvents.stop();
    await send(t, erin, convId, 'hi dave');
    expect(ok(await t.gql(REQUESTS, {}, erin)).dmRequests).toEqual([]);
    expectCode(await t.gql(ACCEPT, { id: reqs[0].id }, erin), 'NOT_FOUND');
    // Now contacts: a new conversation between them needs no request.
    const g = await conversationOf(t, erin, [dave]);
    expect(g).toMatchObject({ reused: true, conversation: { id: convId } });
  });

  it('keeps a decline from the sender and refuses a group with a stranger', async () => {
    const made = await conversationOf(t, fred, [dave]);
    const req = made.dmRequestsSent[0]!;
    const fredEvents = recordUser(t, fred.id);
    expect(ok(await t.gql(DECLINE, { id: req.id }, dave)).declineDmRequest).toBe(true);
    // The sender is not told.
    expect(fredEvents.events).toEqual([]);
    fredEvents.stop();
    expect(ok(await t.gql(REQUESTS, {}, dave)).dmRequests).toEqual([]);
    // The sender's view still reads PENDING.
    const view = ok(await t.gql(CONVERSATION_REQUEST, { id: made.conversation.id }, fred));
    expect(view.conversation.dmRequest).toMatchObject({ id: req.id, state: 'PENDING' });
    expectCode(await t.gql(DECLINE, { id: req.id }, dave), 'NOT_FOUND');

    const refused = expectCode(await createConversation(t, alice, [bob.id, fred.id]), 'FORBIDDEN');
    expect(refused.message).toMatch(/direct message first/);
  });

  it('answers a request when the recipient starts a conversation back', async () => {
    const [hank, ivy] = await Promise.all(
      ['hank', 'ivy'].map((u) => signUpAndIn(t, { username: `${u}dm` })),
    );
    const asked = await conversationOf(t, hank, [ivy]);
    const back = await conversationOf(t, ivy, [hank]);
    expect(back).toMatchObject({
      reused: true,
      conversation: { id: asked.conversation.id, memberCount: 2 },
    });
    expect(ok(await t.gql(REQUESTS, {}, ivy)).dmRequests).toEqual([]);
    const view = ok(await t.gql(CONVERSATION_REQUEST, { id: asked.conversation.id }, hank));
    expect(view.conversation.dmRequest).toBeNull();
  });

  it('caps DM requests a day with VALIDATION naming SVC_LIMIT_DM_REQUESTS_PER_DAY', async () => {
    const sender = await signUpAndIn(t, { username: 'capdm' });
    const targets = await Promise.all(
      ['cap1', 'cap2', 'cap3'].map((u) => signUpAndIn(t, { username: `${u}dm` })),
    );
    await conversationOf(t, sender, [targets[0]!]);
    clock.advance(HOUR_MS);
    await conversationOf(t, sender, [targets[1]!]);
    const capped = expectCode(await createConversation(t, sender, [targets[2]!.id]), 'VALIDATION');
    expect(capped.message).toMatch(/capped at 2 \(SVC_LIMIT_DM_REQUESTS_PER_DAY\)/);
    expect(capped.extensions!.limit).toBe(2);
    // Nothing was created by the refused call.
    const convs = await t.ctx.db.kysely
      .selectFrom('conversation')
      .select('id')
      .where('createdBy', '=', sender.id)
      .execute();
    expect(convs).toHaveLength(2);
    clock.advance(23 * HOUR_MS);
    ok(await createConversation(t, sender, [targets[2]!.id]));
  });

  it('blocks: neither side can start, request or write, and their DIRECT conversation is hidden', async () => {
    const conv = (await conversationOf(t, alice, [carol])).conversation.id as string;
    await send(t, carol, conv, 'before the block');
    const strangerReq = await conversationOf(t, dave, [alice]);
    expect(strangerReq.dmRequestsSent).toHaveLength(1);

    ok(await t.gql(BLOCK, { u: carol.id }, alice));
    ok(await t.gql(BLOCK, { u: dave.id }, alice));
    ok(await t.gql(BLOCK, { u: carol.id }, alice)); // again: no change
    expectCode(await t.gql(BLOCK, { u: alice.id }, alice), 'VALIDATION');
    expectCode(await t.gql(BLOCK, { u: newId() }, alice), 'NOT_FOUND');

    const refused = expectCode(await createConversation(t, carol, [alice.id]), 'FORBIDDEN');
    expect(refused.message).not.toMatch(/block/);
    expectCode(await createConversation(t, alice, [carol.id]), 'FORBIDDEN');
    expectCode(await sendRaw(t, carol, conv, 'after'), 'FORBIDDEN');
    expectCode(await sendRaw(t, alice, conv, 'after'), 'FORBIDDEN');
    for (const who of [alice, carol]) {
      const ids = ok(await t.gql(INBOX, {}, who)).inboxConversations.items.map((c: any) => c.id);
      expect(ids).not.toContain(conv);
    }
    // The pending request from the blocked stranger is gone, and they cannot send another.
    expect(ok(await t.gql(REQUESTS, {}, alice)).dmRequests).toEqual([]);
    expectCode(await createConversation(t, dave, [alice.id, carol.id]), 'FORBIDDEN');
    const blocked = ok(await t.gql('query { blockedUsers { id } }', {}, alice)).blockedUsers;
    expect(blocked.map((u: any) => u.id).sort()).toEqual([carol.id, dave.id].sort());
    // A block is between two people: a third may still put both in a group.
    ok(await createConversation(t, bob, [alice.id, carol.id]));

    expect(ok(await t.gql(UNBLOCK, { u: carol.id }, alice)).unblockUser).toBe(true);
    expect(ok(await t.gql(UNBLOCK, { u: carol.id }, alice)).unblockUser).toBe(false);
    await send(t, carol, conv, 'after the block');
    const ids = ok(await t.gql(INBOX, {}, alice)).inboxConversations.items.map((c: any) => c.id);
    expect(ids).toContain(conv);
  });

  it('applies each user’s DM settings above the operator floors', async () => {
    const s = ok(await t.gql(SETTINGS, {}, bob)).myDmSettings;
    expect(s).toMatchObject({ inbound: 'ANYONE', outbound: 'ANYONE', partners: 'ANY_SERVER' });
    expect(s.outsideFloorFrom).toEqual([]);

    const gina = await signUpAndIn(t, { username: 'ginadm' });
    const ws = await createWorkspace(t, gina, 'Gina');
    await inviteAndJoin(t, gina, ws.id, [bob]);
    // bob takes conversations from contacts only: a workspace mate is refused, no request either.
    ok(await t.gql(UPDATE, { i: { inbound: 'CONTACTS' } }, bob));
    expect(ok(await t.gql(SETTINGS, {}, bob)).myDmSettings.inbound).toBe('CONTACTS');
    const refused = expectCode(await createConversation(t, gina, [bob.id]), 'FORBIDDEN');
    expect(refused.message).toMatch(/does not accept/);
    // ...but an existing contact still gets through (alice and bob share a DIRECT conversation).
    expect((await conversationOf(t, alice, [bob])).reused).toBe(true);
    ok(await t.gql(UPDATE, { i: { inbound: 'ANYONE' } }, bob));
    ok(await createConversation(t, gina, [bob.id]));

    // gina may only start conversations with contacts.
    ok(await t.gql(UPDATE, { i: { outbound: 'CONTACTS' } }, gina));
    const own = expectCode(await createConversation(t, gina, [alice.id]), 'FORBIDDEN');
    expect(own.message).toMatch(/outbound/);
  });
});

describe('operator DM floors and probation', () => {
  const clock = new ManualClock(Date.parse('2030-04-01T00:00:00Z'));
  let t: TestApp;
  let old: Agent, mate: Agent, stranger: Agent;

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: {
        SVC_DM_INBOUND: 'shared_workspace',
        SVC_DM_PARTNERS: 'this_server',
        SVC_PROBATION_HOURS: '2',
      },
    });
    [old, mate, stranger] = await Promise.all(
      ['old', 'mate', 'stranger'].map((u) => signUpAndIn(t, { username: `${u}fl` })),
    );
  });
  afterAll(async () => t?.close());

  it('explains the greyed choices and refuses settings looser than the floor', async () => {
    const s = ok(await t.gql(SETTINGS, {}, old)).myDmSettings;
    expect(s).toMatchObject({
      inbound: 'SHARED_WORKSPACE',
      outbound: 'ANYONE',
      partners: 'THIS_SERVER',
    });
    expect(s.outsideFloorFrom).toEqual([
      expect.objectContaining({
        setting: 'INBOUND',
        floor: 'SHARED_WORKSPACE',
        excludedChoices: ['ANYONE'],
        variable: 'SVC_DM_INBOUND',
      }),
      expect.objectContaining({
        setting: 'PARTNERS',
        floor: 'THIS_SERVER',
        excludedChoices: ['ANY_SERVER'],
        variable: 'SVC_DM_PARTNERS',
      }),
    ]);
    const bad = expectCode(await t.gql(UPDATE, { i: { inbound: 'ANYONE' } }, old), 'VALIDATION');
    expect(bad.message).toMatch(/SVC_DM_INBOUND/);
    expectCode(await t.gql(UPDATE, { i: { partners: 'ANY_SERVER' } }, old), 'VALIDATION');
    ok(await t.gql(UPDATE, { i: { inbound: 'CONTACTS' } }, old));
    ok(await t.gql(UPDATE, { i: { inbound: 'SHARED_WORKSPACE' } }, old));
  });

  it('gives strangers no request under a shared_workspace inbound floor', async () => {
    clock.advance(3 * HOUR_MS);
    expectCode(await createConversation(t, stranger, [old.id]), 'FORBIDDEN');
    const ws = await createWorkspace(t, old, 'Floor');
    await inviteAndJoin(t, old, ws.id, [mate]);
    ok(await createConversation(t, mate, [old.id]));
  });

  it('keeps partners from other servers out under a this_server partners floor', async () => {
    const remote = await signUpAndIn(t, { username: 'remotefl' });
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ homeServer: 'other.example.org' })
      .where('id', '=', remote.id)
      .execute();
    const ws = await createWorkspace(t, old, 'Partners');
    await inviteAndJoin(t, old, ws.id, [remote]);
    const refused = expectCode(await createConversation(t, old, [remote.id]), 'FORBIDDEN');
    expect(refused.message).toMatch(/this server only/);
    expectCode(await createConversation(t, remote, [old.id]), 'FORBIDDEN');
  });

  it('refuses DM requests to strangers during probation, saying when in minutes rounded up', async () => {
    const t2 = await createTestApp({ clock, env: { SVC_PROBATION_HOURS: '2' } });
    try {
      const [veteran, mate2] = await Promise.all(
        ['vet', 'mate2'].map((u) => signUpAndIn(t2, { username: `${u}pr` })),
      );
      clock.advance(3 * HOUR_MS);
      const newbie = await signUpAndIn(t2, { username: 'newbiepr' });
      clock.advance(30 * 60_000 + 1_000); // 1 h 29 min 59 s of probation left
      const refused = expectCode(await createConversation(t2, newbie, [veteran.id]), 'VALIDATION');
      expect(refused.message).toMatch(/in 90 minutes/);
      expect(refused.extensions!.minutes).toBe(90);
      // Nothing was created.
      expect(await t2.ctx.db.kysely.selectFrom('dm_request').selectAll().execute()).toHaveLength(0);
      // People in a shared workspace are no strangers: probation does not stop that.
      const ws = await createWorkspace(t2, mate2, 'Probation');
      await inviteAndJoin(t2, mate2, ws.id, [newbie]);
      ok(await createConversation(t2, newbie, [mate2.id]));
      clock.advance(2 * HOUR_MS);
      ok(await createConversation(t2, newbie, [veteran.id]));
    } finally {
      await t2.close();
    }
  });
});
