import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import {
  conversationOf,
  createWorkspace,
  expectCode,
  giveDevice,
  inviteAndJoin,
  ok,
  recordUser,
} from './_helpers.js';

const ACCEPT = `mutation($s: ID!, $c: ID!) {
  acceptConversationInvite(serverId: $s, conversationId: $c) { id memberIds pendingMemberIds } }`;
const DECLINE = `mutation($s: ID!, $c: ID!) { declineConversationInvite(serverId: $s, conversationId: $c) }`;

// Accept and decline answer NOT_FOUND when there is no invitation: members who never held one
// (the creator, someone added with a device) have nothing to accept or decline.
describe('answering an invitation one does not hold', () => {
  let t: TestApp;
  let alice: Agent, bob: Agent, carol: Agent;
  let conversationId: string;

  beforeAll(async () => {
    t = await createTestApp();
    [alice, bob, carol] = await Promise.all(
      ['alice', 'bob', 'carol'].map((u) => signUpAndIn(t, { username: `${u}inv` })),
    );
    const ws = await createWorkspace(t, alice, 'Invitations');
    await inviteAndJoin(t, alice, ws.id, [bob, carol]);
    await giveDevice(t, alice.id);
    await giveDevice(t, bob.id);
    // alice creates; bob has a device and joins at once; carol is invited.
    const made = await conversationOf(t, alice, [bob, carol], { encrypted: true });
    expect(made.conversation.pendingMemberIds).toEqual([carol.id]);
    conversationId = made.conversation.id;
  });
  afterAll(async () => t?.close());

  const vars = () => ({ s: DIRECT_SPACE_ID, c: conversationId });

  it('answers NOT_FOUND to accept and decline by the creator, and changes nothing', async () => {
    const events = recordUser(t, bob.id);
    expectCode(await t.gql(ACCEPT, vars(), alice), 'NOT_FOUND');
    expectCode(await t.gql(DECLINE, vars(), alice), 'NOT_FOUND');
    expect(events.events).toHaveLength(0);
    events.stop();
  });

  it('answers NOT_FOUND to accept and decline by a member added with a device', async () => {
    expectCode(await t.gql(ACCEPT, vars(), bob), 'NOT_FOUND');
    expectCode(await t.gql(DECLINE, vars(), bob), 'NOT_FOUND');
    const members = await t.ctx.db.kysely
      .selectFrom('conversation_member')
      .select(['accountId', 'state'])
      .where('conversationId', '=', conversationId)
      .execute();
    expect(
      members
        .filter((m) => m.state === 'member')
        .map((m) => m.accountId)
        .sort(),
    ).toEqual([alice.id, bob.id].sort());
  });

  it('still lets an invitee accept, and accept again, but not decline once a member', async () => {
    await giveDevice(t, carol.id);
    const first = ok(await t.gql(ACCEPT, vars(), carol)).acceptConversationInvite;
    expect(first.pendingMemberIds).toEqual([]);
    const again = ok(await t.gql(ACCEPT, vars(), carol)).acceptConversationInvite;
    expect(again.memberIds).toContain(carol.id);
    expectCode(await t.gql(DECLINE, vars(), carol), 'NOT_FOUND');
  });
});
