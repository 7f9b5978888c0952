import { createHash, randomBytes } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { signIn } from '../_util/seed.js';
import type { Agent } from '../_util/app.js';
import { DAY_MS, HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { RECHECK_CHUNK } from '../../src/ws/server.js';

import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  RawClient,
  RELAY_STREAM,
  sendMessage,
  startRealtime,
  until,
  type RealtimeTestServer,
} from './_helpers.js';

// Contract "Events", ways the session ends 1: the endings not shown in session.test.ts close
// this process's sockets at once (the periodic recheck is off, so nothing else could).
describe('every way this process ends a session closes its sockets at once', () => {
  const clock = new ManualClock(Date.parse('2030-01-01T00:00:00Z'));
  let t: RealtimeTestServer;
  const open: RawClient[] = [];

  beforeAll(async () => {
    t = await startRealtime({ clock, env: { SVC_WS_SESSION_RECHECK_SECS: '0' } });
  });
  afterEach(async () => {
    for (const raw of open.splice(0)) if (!raw.closeInfo) raw.close();
    await until(async () => (await t.connections()) === 0, 'connections to be released');
    expect(await t.subscriptions()).toBe(0);
  });
  afterAll(async () => t?.stop());

  async function subscribed(agent: Agent): Promise<RawClient> {
    const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', agent);
    open.push(raw);
    raw.send({ type: 'connection_init' });
    await raw.next((m) => m.type === 'connection_ack');
    raw.send({ id: '1', type: 'subscribe', payload: { query: RELAY_STREAM } });
    return raw;
  }

  async function expectEnded(raw: RawClient): Promise<void> {
    expect(await raw.waitClosed()).toEqual({ code: 4401, reason: 'session ended' });
    expect(raw.messages.at(-1)).toEqual({ id: '1', type: 'complete' });
  }

  it('a password reset closes every session of the account', async () => {
    const alice = await t.signUp();
    const other = await signIn(t.app, alice.username);
    const a = await subscribed(alice);
    const b = await subscribed(other);
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');
    const token = randomBytes(32).toString('base64url');
    const now = clock.now().getTime();
    await t.server.ctx.db.kysely
      .insertInto('password_reset')
      .values({
        id: `pr_${token.slice(0, 10)}`,
        tokenHash: createHash('sha256').update(token).digest('base64url'),
        accountId: alice.id,
        createdAt: now,
        expiresAt: now + HOUR_MS,
        usedAt: null,
      })
      .execute();
    const res = await t.gql(
      'mutation($t: String!, $p: String!) { resetPassword(input: { token: $t, newPassword: $p }) }',
      { t: token, p: 'a brand new password' },
    );
    expect(res.errors).toBeUndefined();
    await expectEnded(a);
    await expectEnded(b);
  });

  it('a deletion request closes the other sessions, and the purge the last one', async () => {
    const bob = await t.signUp();
    const other = await signIn(t.app, bob.username);
    const mine = await subscribed(bob);
    const theirs = await subscribed(other);
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');
    const res = await t.gql(
      'mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }',
      { c: bob.username },
      bob,
    );
    expect(res.errors).toBeUndefined();
    await expectEnded(theirs);
    expect(mine.closeInfo).toBeNull();
    await until(async () => (await t.connections()) === 1, 'one connection left');

    clock.advance(14 * DAY_MS);
    expect(await t.server.ctx.scheduler.runOnce('account-purge')).toBe(true);
    await expectEnded(mine);
  });
});

describe('the periodic recheck', () => {
  it(`reads the sessions of open connections ${RECHECK_CHUNK} per query; a deleted one is dead`, async () => {
    const t = await startRealtime({ env: { SVC_WS_SESSION_RECHECK_SECS: '0' } });
    try {
      const carol = await t.signUp();
      const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', carol);
      raw.send({ type: 'connection_init' });
      await raw.next((m) => m.type === 'connection_ack');
      // Stand-ins for 1,100 more sessions with open connections on this process.
      const bySession = (t.server.realtime as unknown as { bySession: Map<string, Set<unknown>> })
        .bySession;
      for (let i = 0; i < 1100; i++) bySession.set(`s_fake_${i}`, new Set());
      const deadAmong = vi.spyOn(t.server.ctx.services.sessions, 'deadAmong');
      // Gone from the database, as `svc account purge` in another process leaves it.
      await t.server.ctx.db.kysely
        .deleteFrom('session')
        .where('accountId', '=', carol.id)
        .execute();
      await t.server.realtime.recheck();
      expect(deadAmong.mock.calls.map(([ids]) => ids.length)).toEqual([500, 500, 101]);
      expect(await raw.waitClosed()).toEqual({ code: 4401, reason: 'session ended' });
      for (let i = 0; i < 1100; i++) bySession.delete(`s_fake_${i}`);
      await until(async () => (await t.connections()) === 0, 'the place to be freed');
    } finally {
      await t.stop();
    }
  });
});

// Issue 5, point 4: relayStream carries the caller's own events of the direct space.
describe('relayStream', () => {
  it('delivers a direct message to its members, and to no one else', async () => {
    const t = await startRealtime();
    const clients: Array<ReturnType<typeof modernClient>> = [];
    try {
      const [alice, bob, carol] = [await t.signUp(), await t.signUp(), await t.signUp()];
      const space = await createWorkspace(t, alice);
      await joinWorkspace(t, alice, bob, space.id);
      await joinWorkspace(t, alice, carol, space.id);
      const created = await t.gql(
        'mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) { conversation { id kind } } }',
        { m: [bob.id] },
        alice,
      );
      expect(created.data?.createConversation.conversation.kind).toBe('DIRECT');
      const dm = created.data!.createConversation.conversation.id as string;
      const bobClient = modernClient(t.wsUrl, bob);
      const carolClient = modernClient(t.wsUrl, carol);
      clients.push(bobClient, carolClient);
      const bobs = new Collected(bobClient, RELAY_STREAM);
      const carols = new Collected(carolClient, RELAY_STREAM);
      await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');

      await sendMessage(t, alice, dm, 'hello bob');
      await until(
        () => bobs.events('relayStream').some((e) => e.conversationId === dm),
        'the direct message on relayStream',
      );
      const seen = bobs.events('relayStream').find((e) => e.conversationId === dm)!;
      expect(seen.type).toBe('MessageCreated');
      // Carol shares the workspace but not the conversation: nothing of it reaches her.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(carols.events('relayStream').filter((e) => e.conversationId === dm)).toEqual([]);
    } finally {
      for (const c of clients) await c.dispose();
      await t.stop();
    }
  });
});
