import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  DELIVERED_KEEP_MS,
  EVENT_BACKLOG_PER_PERSON,
  EVENT_MAX_AGE_MS,
} from '../../src/federation/event-delivery.js';
import { newId } from '../../src/lib/ids.js';
import { createTestDatabase, TEST_DB, type Agent, type TestDatabase } from '../_util/app.js';
import { signIn, signUpAndIn } from '../_util/seed.js';
import { cli } from '../cli/cli-io.js';
import type { KeyAccount } from '../devices/_keys.js';
import { Collected, modernClient, until } from '../realtime/_helpers.js';

import {
  CREATE_INVITE,
  CREATE_WORKSPACE,
  freePort,
  JOIN,
  keyUser,
  SEND,
  startPeer,
  viaRelay,
  type Peer,
} from './_fed.js';

// docs/federation.md, "Events": a host stores the events of a person from another server until
// their relay has them, sends each once, and the relay publishes each once.

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const ME = '{ me { username } }';

const subscriptions = async (relay: Peer) =>
  (await relay.ctx.metrics.wsSubscriptions.get()).values[0]?.value ?? 0;

/** relayStream on the relay (the only subscription there), live once the relay counts it. */
async function subscribe(relay: Peer, who: KeyAccount) {
  await until(async () => (await subscriptions(relay)) === 0, 'no subscription on the relay');
  const client = modernClient(`ws://127.0.0.1:${relay.address.port}/api/ws`, who.agent);
  const sub = new Collected(
    client,
    'subscription { relayStream { type hostServerId conversationId payload } }',
  );
  await until(async () => (await subscriptions(relay)) === 1, 'the subscription on the relay');
  return { client, sub };
}

/** The texts of the messages relayStream delivered, in the order it delivered them. */
function textsOf(sub: Collected): string[] {
  return sub
    .events('relayStream')
    .filter((e) => e.type === 'MessageCreated')
    .map((e) => (e.payload as { message: { text: string } }).message.text);
}

/** The local row of a person from another server, on the host. */
async function shadowId(host: Peer, relay: Peer, user: string): Promise<string> {
  const row = await host.ctx.db.kysely
    .selectFrom('account')
    .select('id')
    .where('usernameKey', '=', `${user}@${relay.id}`)
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('events for a person of another server are stored until their relay has them', () => {
  let dbA: TestDatabase;
  let dbB: TestDatabase;
  let portA: number;
  let portB: number;
  let a: Peer;
  let b: Peer;
  let alice: KeyAccount;
  let bob: Agent;
  let channelId: string;
  let aliceOnB: string;

  beforeAll(async () => {
    dbA = await createTestDatabase();
    dbB = await createTestDatabase();
    portA = await freePort();
    portB = await freePort();
    a = await startPeer({ database: dbA, port: portA });
    b = await startPeer({ database: dbB, port: portB });
    alice = await keyUser(a, 'alice');
    bob = await signUpAndIn(b.t, { username: 'bob' });
    const ws = (await b.t.gql(CREATE_WORKSPACE, { name: 'Kept' }, bob)).body.data!.createWorkspace;
    channelId = ws.channels[0].id;
    const token = (await b.t.gql(CREATE_INVITE, { id: ws.id }, bob)).body.data!
      .createWorkspaceInvite.token;
    expect((await viaRelay(a, alice, b.id, JOIN, { token })).json().errors).toBeUndefined();
    aliceOnB = await shadowId(b, a, 'alice');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await dbA?.drop();
    await dbB?.drop();
  });

  const pending = () =>
    b.ctx.db.kysely
      .selectFrom('remote_event')
      .selectAll()
      .where('accountId', '=', aliceOnB)
      .where('deliveredAt', 'is', null)
      .orderBy('seq')
      .execute();
  const delivery = () =>
    b.ctx.db.kysely
      .selectFrom('remote_event_delivery')
      .selectAll()
      .where('accountId', '=', aliceOnB)
      .executeTakeFirstOrThrow();
  const send = async (text: string) => {
    expect((await b.t.gql(SEND, { c: channelId, text }, bob)).body.errors).toBeUndefined();
  };

  it('a relay that was down gets the events it missed, in order, across restarts of the host', async () => {
    await a.stop();
    await send('missed 1');
    await send('missed 2');
    await until(
      async () => (await pending()).filter((r) => r.body.includes('missed')).length === 2,
      'two events stored for alice',
    );
    await until(async () => (await delivery()).attempts >= 1, 'a failed attempt');
    expect((await delivery()).lastError).toMatch(/unreachable/);

    // The host restarts with the events waiting; it holds alice's streams again at start.
    await b.stop();
    b = await startPeer({ database: dbB, port: portB });
    bob = await signIn(b.t, 'bob');
    await until(() => b.ctx.federation.bridge!.isOpen(aliceOnB), "alice's streams on B");
    await send('missed 3');
    await until(
      async () => (await pending()).filter((r) => r.body.includes('missed')).length === 3,
      'the third event stored',
    );
    // As after a long outage: the next attempt is an hour away.
    await b.ctx.db.kysely
      .updateTable('remote_event_delivery')
      .set({ nextAttemptAt: Date.now() + 3_600_000 })
      .execute();
    await b.stop();

    // The relay is back, and alice listens; then the host is back too.
    a = await startPeer({ database: dbA, port: portA });
    const { client, sub } = await subscribe(a, alice);
    try {
      b = await startPeer({ database: dbB, port: portB });
      // Still in backoff: alice's next request through A shows B that A is up again.
      expect((await delivery()).nextAttemptAt).toBeGreaterThan(Date.now());
      expect((await viaRelay(a, alice, b.id, ME)).status).toBe(200);
      await until(() => textsOf(sub).length >= 3, 'the missed events through relayStream');
      expect(textsOf(sub)).toEqual(['missed 1', 'missed 2', 'missed 3']);
      const fromB = sub.events('relayStream').filter((e) => e.type === 'MessageCreated');
      expect(fromB.every((e) => e.hostServerId === b.id)).toBe(true);
      await until(async () => (await pending()).length === 0, 'every event marked delivered');
      // The sending process clears the delivery's bookkeeping in the statement after the one
      // that marks the events delivered: wait for it.
      await until(async () => {
        const d = await delivery();
        return d.attempts === 0 && d.lastError === null && d.leasedUntil === 0;
      }, 'the delivery cleared');

      // Live again: the next event arrives at once, once.
      bob = await signIn(b.t, 'bob');
      await send('live again');
      await until(() => textsOf(sub).includes('live again'), 'the live event');
      expect(textsOf(sub)).toEqual(['missed 1', 'missed 2', 'missed 3', 'live again']);
      sub.unsubscribe();
    } finally {
      await client.dispose();
    }
  });

  it('the relay publishes an event once, even when it arrives again after a restart', async () => {
    const event = {
      id: `test-${newId()}`,
      type: 'MessageCreated',
      at: Date.now(),
      payload: { message: { text: 'sent twice' } },
    };
    const post = async (events: unknown[]) => {
      const res = await b.ctx.federation.client!.call(a.id, {
        method: 'POST',
        path: 'events',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ user: 'alice', events })),
      });
      expect(res.status).toBe(200);
      return JSON.parse(res.body.toString('utf8')) as { delivered: number; repeated: number };
    };
    let listening = await subscribe(a, alice);
    try {
      // A copy within one call is a copy too.
      expect(await post([event, event])).toEqual({ delivered: 1, repeated: 1 });
      await until(() => textsOf(listening.sub).includes('sent twice'), 'the event');
    } finally {
      await listening.client.dispose();
    }
    // The relay remembers in its database, not in the process.
    await a.stop();
    a = await startPeer({ database: dbA, port: portA });
    listening = await subscribe(a, alice);
    try {
      expect(await post([event])).toEqual({ delivered: 0, repeated: 1 });
      // An event older than a host keeps any is not published (a copy of it may be forgotten).
      const old = { ...event, id: `test-${newId()}`, at: Date.now() - EVENT_MAX_AGE_MS - 60_000 };
      expect(await post([old])).toEqual({ delivered: 0, repeated: 0 });
      const fresh = { ...event, id: `test-${newId()}`, payload: { message: { text: 'new one' } } };
      expect(await post([fresh])).toEqual({ delivered: 1, repeated: 0 });
      await until(() => textsOf(listening.sub).includes('new one'), 'the new event');
      expect(textsOf(listening.sub)).toEqual(['new one']);
    } finally {
      await listening.client.dispose();
    }
  });

  it('the host keeps at most a day and a thousand undelivered events per person', async () => {
    const db = b.ctx.db.kysely;
    // Hold the delivery back (as while the relay is down) and fill the store by hand.
    await db
      .updateTable('remote_event_delivery')
      .set({ nextAttemptAt: Date.now() + 3_600_000 })
      .where('accountId', '=', aliceOnB)
      .execute();
    const now = Date.now();
    const row = (n: number, createdAt: number, deliveredAt: number | null = null) => ({
      accountId: aliceOnB,
      eventId: `fill-${n}`,
      body: JSON.stringify({ id: `fill-${n}`, type: 'Test', at: createdAt, payload: { n } }),
      createdAt,
      deliveredAt,
    });
    await db.deleteFrom('remote_event').execute();
    await db
      .insertInto('remote_event')
      .values([
        row(-3, now - EVENT_MAX_AGE_MS - 60_000),
        row(-2, now - DELIVERED_KEEP_MS - 60_000, now - DELIVERED_KEEP_MS - 60_000),
        row(-1, now - 60_000, now - 60_000),
      ])
      .execute();
    for (let i = 0; i < EVENT_BACKLOG_PER_PERSON + 5; i += 250) {
      const batch = [];
      for (let n = i; n < Math.min(i + 250, EVENT_BACKLOG_PER_PERSON + 5); n++) {
        batch.push(row(n, now));
      }
      await db.insertInto('remote_event').values(batch).execute();
    }
    expect(await b.ctx.federation.events!.sweep()).toBe(1 + 5);
    const left = await db
      .selectFrom('remote_event')
      .select(['eventId', 'deliveredAt'])
      .orderBy('seq')
      .execute();
    // The newest thousand undelivered, and the delivered one still within its few minutes.
    expect(left.filter((r) => r.deliveredAt === null).map((r) => r.eventId)).toEqual(
      Array.from({ length: EVENT_BACKLOG_PER_PERSON }, (_, n) => `fill-${n + 5}`),
    );
    expect(left.filter((r) => r.deliveredAt !== null).map((r) => r.eventId)).toEqual(['fill--1']);
    await db.deleteFrom('remote_event').execute();
  });

  it('a block made outside the host process stops the events there too', async () => {
    await b.ctx.db.kysely
      .updateTable('remote_event_delivery')
      .set({ nextAttemptAt: Date.now() })
      .execute();
    const { client, sub } = await subscribe(a, alice);
    try {
      await send('before the block');
      await until(() => textsOf(sub).includes('before the block'), 'the event before the block');
      // The command line blocks alice on B: B's process did not make the block, so its streams
      // of hers are still open and record the next event.
      const run = await cli(['principal', 'block', `remote:alice@${a.id}`], {
        ...dbB.env,
        SVC_LOG_LEVEL: 'warn',
      });
      expect(run.code).toBe(0);
      await send('after the block');
      await until(() => !b.ctx.federation.bridge!.isOpen(aliceOnB), "B to close alice's streams");
      expect(await pending()).toEqual([]);
      await new Promise((r) => setTimeout(r, 300));
      expect(textsOf(sub)).toEqual(['before the block']);
      expect(
        b.logs.lines.some((l) => l.msg === 'remote events discarded: person blocked or revoked'),
      ).toBe(true);
    } finally {
      await client.dispose();
    }
  });
});

// Two processes of one host (one PostgreSQL database, one Redis) both hold alice's streams, so
// both hear every event for her; she still gets each once, and the relay sees no copy.
describe.skipIf(!REDIS_URL || TEST_DB !== 'postgres')('two processes of one host', () => {
  let dbB: TestDatabase;
  let a: Peer;
  let b1: Peer;
  let b2: Peer;

  afterAll(async () => {
    await a?.stop();
    await b2?.stop();
    await b1?.stop();
    await dbB?.drop();
  });

  it('deliver each event to the remote person exactly once, in order', async () => {
    dbB = await createTestDatabase();
    const redis = { SVC_REDIS_URL: REDIS_URL!, SVC_REDIS_PREFIX: `svc-test-${newId()}:` };
    a = await startPeer();
    b1 = await startPeer({ database: dbB, env: redis });
    const alice = await keyUser(a, 'alice');
    const bob = await signUpAndIn(b1.t, { username: 'bob' });
    const ws = (await b1.t.gql(CREATE_WORKSPACE, { name: 'Twice' }, bob)).body.data!
      .createWorkspace;
    const channel = ws.channels[0].id as string;
    const token = (await b1.t.gql(CREATE_INVITE, { id: ws.id }, bob)).body.data!
      .createWorkspaceInvite.token;
    expect((await viaRelay(a, alice, b1.id, JOIN, { token })).json().errors).toBeUndefined();
    // The second process answers for the same server id (behind one proxy, as in production).
    b2 = await startPeer({ database: dbB, env: redis, publicUrl: b1.url });
    const aliceOnB = await shadowId(b1, a, 'alice');
    await until(() => b2.ctx.federation.bridge!.isOpen(aliceOnB), "alice's streams on B2");
    expect(b1.ctx.federation.bridge!.isOpen(aliceOnB)).toBe(true);

    const { client, sub } = await subscribe(a, alice);
    try {
      const bobOn2 = await signIn(b2.t, 'bob');
      const texts = Array.from({ length: 12 }, (_, i) => `message ${i + 1}`);
      for (const [i, text] of texts.entries()) {
        const [peer, agent] = i % 2 === 0 ? [b1, bob] : [b2, bobOn2];
        expect((await peer.t.gql(SEND, { c: channel, text }, agent)).body.errors).toBeUndefined();
      }
      await until(() => textsOf(sub).length >= texts.length, 'every message through relayStream');
      // A moment for any copy to arrive.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(textsOf(sub)).toEqual(texts);
      const rows = await b1.ctx.db.kysely
        .selectFrom('remote_event')
        .select('body')
        .where('accountId', '=', aliceOnB)
        .execute();
      expect(rows.filter((r) => r.body.includes('"MessageCreated"'))).toHaveLength(texts.length);
      // The relay never had to drop a copy: each event left the host once.
      expect(a.logs.lines.filter((l) => l.msg === 'relay: repeated events dropped')).toEqual([]);
      sub.unsubscribe();
    } finally {
      await client.dispose();
    }
  });
});
