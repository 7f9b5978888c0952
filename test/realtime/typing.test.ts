import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';
import { recordQueries } from '../conversations/_helpers.js';

import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  RawClient,
  RELAY_STREAM,
  startRealtime,
  until,
  type RealtimeTestServer,
} from './_helpers.js';

const TYPING = 'mutation($c: ID!) { startTyping(conversationId: $c) }';

// TypingStarted: direct conversations only, names the typist by user_id, username and
// display_name (null when none), throttled per user, never stored.
describe('typing', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let bob: Agent;
  let dm: string;
  let space: { id: string; channels: Record<string, string> };
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startRealtime();
    alice = await t.signUp();
    bob = await t.signUp();
    space = await createWorkspace(t, alice);
    await joinWorkspace(t, alice, bob, space.id);
    const created = await t.gql(
      'mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) { conversation { id kind } } }',
      { m: [bob.id] },
      alice,
    );
    expect(created.data?.createConversation.conversation.kind).toBe('DIRECT');
    dm = created.data!.createConversation.conversation.id;
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  it('reaches the other member on relayStream with user_id, username, display_name', async () => {
    const bobClient = modernClient(t.wsUrl, bob);
    const aliceClient = modernClient(t.wsUrl, alice);
    clients.push(bobClient, aliceClient);
    const bobs = new Collected(bobClient, RELAY_STREAM);
    const alices = new Collected(aliceClient, RELAY_STREAM);
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');
    const messagesBefore = await t.server.ctx.db.kysely
      .selectFrom('message')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();

    expect((await t.gql(TYPING, { c: dm }, alice)).data?.startTyping).toBe(true);
    await until(
      () => bobs.events('relayStream').some((e) => e.type === 'TypingStarted'),
      'TypingStarted',
    );
    const typing = bobs.events('relayStream').find((e) => e.type === 'TypingStarted')!;
    expect(typing).toMatchObject({ type: 'TypingStarted', conversationId: dm });
    expect(typing.payload).toEqual({
      user_id: alice.id,
      username: alice.username,
      display_name: null,
    });

    // Throttled per user and conversation: the repeat sends nothing.
    expect((await t.gql(TYPING, { c: dm }, alice)).data?.startTyping).toBe(false);

    // With a display name, it is carried.
    await t.gql('mutation { updateProfile(input: { displayName: "Bobby" }) { id } }', {}, bob);
    expect((await t.gql(TYPING, { c: dm }, bob)).data?.startTyping).toBe(true);
    await until(
      () => alices.events('relayStream').some((e) => e.type === 'TypingStarted'),
      'TypingStarted for alice',
    );
    expect(alices.events('relayStream').find((e) => e.type === 'TypingStarted')!.payload).toEqual({
      user_id: bob.id,
      username: bob.username,
      display_name: 'Bobby',
    });
    // The typist does not hear their own typing; nothing is stored as a message.
    expect(
      bobs
        .events('relayStream')
        .filter((e) => e.type === 'TypingStarted' && e.payload.user_id === bob.id),
    ).toEqual([]);
    const messagesAfter = await t.server.ctx.db.kysely
      .selectFrom('message')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(messagesAfter.n)).toBe(Number(messagesBefore.n));
  });

  it('reaches a legacy-protocol subscriber as data', async () => {
    const raw = await RawClient.open(t.wsUrl, 'graphql-ws', bob);
    raw.send({ type: 'connection_init' });
    await raw.next((m) => m.type === 'connection_ack');
    const before = await t.subscriptions();
    raw.send({ id: 'r', type: 'start', payload: { query: RELAY_STREAM } });
    await until(async () => (await t.subscriptions()) === before + 1, 'the subscription');
    // The throttle window of the first test may still be open; wait it out by retrying.
    await until(
      async () => (await t.gql(TYPING, { c: dm }, alice)).data?.startTyping === true,
      'a typing event',
      8_000,
    );
    const data = await raw.next(
      (m) => m.id === 'r' && m.payload?.data?.relayStream?.type === 'TypingStarted',
    );
    expect(data.payload.data.relayStream).toMatchObject({
      type: 'TypingStarted',
      payload: { user_id: alice.id, username: alice.username },
    });
    raw.close();
  });

  it('is for direct conversations only, and their members', async () => {
    const inChannel = await t.gql(TYPING, { c: space.channels.general }, alice);
    expect(inChannel.errors?.[0]).toMatchObject({
      message: 'typing is shown in direct conversations only',
      extensions: { code: 'VALIDATION' },
    });
    const carol = await t.signUp();
    const stranger = await t.gql(TYPING, { c: dm }, carol);
    expect(stranger.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // A channel's outsider is not found either, and its members' invitation rule holds.
    const outsider = await t.gql(TYPING, { c: space.channels.general }, carol);
    expect(outsider.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('reads only the caller’s own membership when refusing a channel', async () => {
    const statements = await recordQueries(() => t.gql(TYPING, { c: space.channels.general }, bob));
    const memberReads = statements.filter((s) => /"conversation_member"/.test(s));
    expect(memberReads.length).toBeGreaterThan(0);
    // Every read of members names the caller (or, read with others' on PostgreSQL, each
    // caller's key, or the account of the session it is read with): a channel of thousands
    // costs one row.
    for (const s of memberReads) {
      expect(s).toMatch(/"accountId" = (\?|\$\d+|"k"\."aid"|"x"\."accountId")/);
    }
    // The caller's access alone: one statement (on PostgreSQL, the session's).
    expect(statements.filter((s) => /"conversation"/.test(s))).toHaveLength(1);
  });
});
