import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';
import { recordQueries } from '../conversations/_helpers.js';

import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  sendMessage,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  workspaceEvent,
  type RealtimeTestServer,
} from './_helpers.js';

// workspaceEvents(serverId): each subscriber sees what the event's audience allows, from access
// cached at subscribe and kept current by membership events; the stream ends with MemberLeft.
describe('who sees which workspace event', () => {
  let t: RealtimeTestServer;
  let alice: Agent; // owner
  let bob: Agent; // member
  let carol: Agent; // guest, given #general
  let space: { id: string; channels: Record<string, string> };
  let secret: string;
  const clients: Client[] = [];
  const streams = new Map<string, Collected>();

  const texts = (who: string) =>
    streams
      .get(who)!
      .events('workspaceEvents')
      .filter((e) => e.type === 'MessageCreated')
      .map((e) => e.payload.message?.text ?? e.payload.text);

  /**
   * Sends a marker message everyone can see, and waits until everyone still listening has it.
   * Compares message texts exactly: a short label such as "b1" also occurs inside hex ids.
   */
  async function barrier(label: string, listening: string[]): Promise<void> {
    await sendMessage(t, alice, space.channels.general!, label);
    for (const who of listening) {
      await until(() => texts(who).includes(label), `${who}: ${label}`);
    }
  }

  beforeAll(async () => {
    t = await startRealtime();
    alice = await t.signUp();
    bob = await t.signUp();
    carol = await t.signUp();
    space = await createWorkspace(t, alice, 'Audience');
    await joinWorkspace(t, alice, bob, space.id);
    await joinWorkspace(t, alice, carol, space.id, 'GUEST', [space.channels.general!]);
    const created = await t.gql(
      `mutation($s: ID!, $m: [ID!]) {
        createChannel(input: { serverId: $s, name: "secret", isPrivate: true, memberIds: $m }) { id }
      }`,
      { s: space.id, m: [bob.id] },
      alice,
    );
    secret = created.data!.createChannel.id;
    for (const [name, agent] of [
      ['alice', alice],
      ['bob', bob],
      ['carol', carol],
    ] as const) {
      const client = modernClient(t.wsUrl, agent);
      clients.push(client);
      streams.set(name, new Collected(client, WORKSPACE_EVENTS, { id: space.id }));
    }
    await until(async () => (await t.subscriptions()) === 3, 'three subscriptions');
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  it('shows public channels to members, and to guests only the channels they are in', async () => {
    await sendMessage(t, bob, space.channels.random!, 'in random');
    await sendMessage(t, bob, secret, 'in secret');
    await barrier('b1', ['alice', 'bob', 'carol']);
    expect(texts('alice')).toEqual(expect.arrayContaining(['in random', 'in secret', 'b1']));
    expect(texts('bob')).toEqual(expect.arrayContaining(['in random', 'in secret', 'b1']));
    expect(texts('carol')).toEqual(['b1']);
  });

  it('shows events addressed to users only to them', async () => {
    await t.server.ctx.bus.publish(
      workspaceEvent(space.id, 'ReadMarkerUpdated', {
        audience: { kind: 'users', userIds: [bob.id] },
        marker: 'for-bob',
      }),
    );
    await barrier('b2', ['alice', 'bob', 'carol']);
    const saw = (who: string) => JSON.stringify(streams.get(who)!.results).includes('for-bob');
    expect([saw('alice'), saw('bob'), saw('carol')]).toEqual([false, true, false]);
  });

  it('follows membership: a guest added to a private channel sees it, removed no more', async () => {
    const added = await t.gql(
      'mutation($c: ID!, $u: [ID!]!) { addChannelMembers(conversationId: $c, userIds: $u) { id } }',
      { c: secret, u: [carol.id] },
      alice,
    );
    expect(added.errors).toBeUndefined();
    await sendMessage(t, bob, secret, 'secret for carol');
    await barrier('b3', ['alice', 'bob', 'carol']);
    const carolEvents = streams.get('carol')!.events('workspaceEvents');
    expect(carolEvents.some((e) => e.type === 'MemberAddedToConversation')).toBe(true);
    expect(texts('carol')).toContain('secret for carol');

    const removed = await t.gql(
      'mutation($c: ID!, $u: ID!) { removeChannelMember(conversationId: $c, userId: $u) }',
      { c: secret, u: carol.id },
      alice,
    );
    expect(removed.errors).toBeUndefined();
    await sendMessage(t, bob, secret, 'secret without carol');
    await barrier('b4', ['alice', 'bob', 'carol']);
    expect(texts('carol')).not.toContain('secret without carol');
    expect(texts('bob')).toContain('secret without carol');
    const removals = streams
      .get('carol')!
      .events('workspaceEvents')
      .filter((e) => e.type === 'MemberRemovedFromConversation');
    expect(removals).toHaveLength(1);
  });

  it('follows an addition or removal that names its person without reading who else is in', async () => {
    // The policy's reread of which subscribers are members (services/realtime/workspace-stream.ts)
    // is for events that may change many people's membership; these name the one person.
    const reread =
      /from "conversation_member" where "conversationId" = \? and "accountId" in \([^)]*\) and "state" = \?/;
    const statements = await recordQueries(async () => {
      const added = await t.gql(
        'mutation($c: ID!, $u: [ID!]!) { addChannelMembers(conversationId: $c, userIds: $u) { id } }',
        { c: secret, u: [carol.id] },
        alice,
      );
      expect(added.errors).toBeUndefined();
      await sendMessage(t, bob, secret, 'secret for carol again');
      await barrier('named-1', ['alice', 'bob', 'carol']);
      const removed = await t.gql(
        'mutation($c: ID!, $u: ID!) { removeChannelMember(conversationId: $c, userId: $u) }',
        { c: secret, u: carol.id },
        alice,
      );
      expect(removed.errors).toBeUndefined();
      await sendMessage(t, bob, secret, 'secret without carol again');
      await barrier('named-2', ['alice', 'bob', 'carol']);
    });
    expect(texts('carol')).toContain('secret for carol again');
    expect(texts('carol')).not.toContain('secret without carol again');
    expect(
      statements.filter((q) => reread.test(q)),
      statements.join('\n'),
    ).toEqual([]);
  });

  it('follows role changes: a guest made a member sees public channels', async () => {
    const changed = await t.gql(
      'mutation($s: ID!, $u: ID!) { setMemberRole(input: { serverId: $s, userId: $u, role: MEMBER }) { role } }',
      { s: space.id, u: carol.id },
      alice,
    );
    expect(changed.errors).toBeUndefined();
    await sendMessage(t, bob, space.channels.random!, 'random for carol');
    await barrier('named-1', ['alice', 'bob', 'carol']);
    expect(texts('carol')).toContain('random for carol');
  });

  it('ends the stream of a member who leaves, after their MemberLeft', async () => {
    const left = await t.gql(
      'mutation($s: ID!) { leaveWorkspace(serverId: $s) }',
      { s: space.id },
      bob,
    );
    expect(left.data?.leaveWorkspace).toBe(true);
    const bobs = streams.get('bob')!;
    await bobs.waitDone();
    expect(bobs.completed).toBe(true);
    expect(bobs.events('workspaceEvents').at(-1)).toMatchObject({
      type: 'MemberLeft',
      payload: { userId: bob.id },
    });
    await barrier('b6', ['alice', 'carol']);
    expect(texts('bob')).not.toContain('b6');
    expect(streams.get('alice')!.completed).toBe(false);
    await until(async () => (await t.subscriptions()) === 2, 'bob’s place to be freed');
  });

  it('ends every stream when the workspace is deleted, after each member’s own MemberLeft', async () => {
    const deleted = await t.gql(
      'mutation($s: ID!) { deleteWorkspace(input: { serverId: $s, confirmName: "Audience" }) { deleted } }',
      { s: space.id },
      alice,
    );
    expect(deleted.errors).toBeUndefined();
    for (const [who, agent] of [
      ['alice', alice],
      ['carol', carol],
    ] as const) {
      const s = streams.get(who)!;
      await s.waitDone();
      expect(s.completed).toBe(true);
      const lefts = s.events('workspaceEvents').filter((e) => e.type === 'MemberLeft');
      expect(lefts.at(-1)!.payload.userId).toBe(agent.id);
      expect(s.events('workspaceEvents').at(-1)!.type).toBe('MemberLeft');
    }
    await until(async () => (await t.subscriptions()) === 0, 'every place to be freed');
    // The workspace now answers like one never joined.
    const again = new Collected(clients[0]!, WORKSPACE_EVENTS, { id: space.id });
    await again.waitDone();
    expect(again.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND' });
  });
});
