import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';

import {
  Collected,
  createWorkspace,
  modernClient,
  RawClient,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  workspaceEvent,
  type RealtimeTestServer,
} from './_helpers.js';

/** Events of one kind a subscription received (others, such as presence, may come too). */
const updates = (s: Collected, type = 'WorkspaceUpdated') =>
  s.events('workspaceEvents').filter((e) => e.type === type);

const OTHER_DOCUMENT = `subscription($id: ID!) { workspaceEvents(serverId: $id) { type payload } }`;

// The hot path: one serialization per event and distinct document, order kept, and a client
// that stops reading is closed (4008) without holding anyone else up.
describe('fan-out', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let serverId: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startRealtime({ overrides: { realtime: { maxBufferedBytes: 256 * 1024 } } });
    alice = await t.signUp();
    serverId = (await createWorkspace(t, alice, 'Fanout')).id;
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  it('serializes an event once per distinct document, whatever the number of subscribers', async () => {
    const same: Collected[] = [];
    const other: Collected[] = [];
    for (let i = 0; i < 12; i += 1) {
      const c = modernClient(t.wsUrl, alice);
      clients.push(c);
      // Variables written in another key order are the same subscription.
      same.push(new Collected(c, WORKSPACE_EVENTS, { id: serverId }));
      if (i < 4) other.push(new Collected(c, OTHER_DOCUMENT, { id: serverId }));
    }
    await until(async () => (await t.subscriptions()) === 16, '16 subscriptions');
    // Alice's own presence is announced on this topic too: let it pass before counting.
    await until(() => t.server.ctx.services.presence.settled(), 'presence to settle');
    const before = t.server.realtime.fanout.serializations;
    await t.server.ctx.bus.publish(
      workspaceEvent(serverId, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, n: 1 }),
    );
    for (const s of [...same, ...other]) await until(() => updates(s).length === 1, 'the event');
    expect(t.server.realtime.fanout.serializations - before).toBe(2);
    expect(same.every((s) => updates(s)[0]!.payload.n === 1)).toBe(true);
    expect(updates(other[0]!)[0]).toEqual({
      type: 'WorkspaceUpdated',
      payload: { n: 1 },
    });
    for (const c of clients.splice(0)) await c.dispose();
    await until(async () => (await t.subscriptions()) === 0, 'subscriptions to end');
  });

  it('keeps the order of a conversation’s events', async () => {
    const client = modernClient(t.wsUrl, alice);
    clients.push(client);
    const sub = new Collected(client, WORKSPACE_EVENTS, { id: serverId });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    const conversationId = '00000000-0000-7000-8000-00000000c0de';
    for (let n = 0; n < 300; n += 1) {
      void t.server.ctx.bus.publish(
        workspaceEvent(serverId, 'MessageCreated', {
          audience: { kind: 'workspace' },
          conversationId,
          n,
        }),
      );
    }
    const created = () => updates(sub, 'MessageCreated');
    await until(() => created().length === 300, '300 events');
    expect(created().map((e) => e.payload.n)).toEqual(Array.from({ length: 300 }, (_, n) => n));
    for (const c of clients.splice(0)) await c.dispose();
    await until(async () => (await t.subscriptions()) === 0, 'subscriptions to end');
  });

  it('ends the subscriptions of a topic told to resync, after the events before the signal, and no other', async () => {
    const otherSpace = (await createWorkspace(t, alice, 'Fanout elsewhere')).id;
    const client = modernClient(t.wsUrl, alice);
    clients.push(client);
    const told = new Collected(client, WORKSPACE_EVENTS, { id: serverId });
    const elsewhere = new Collected(client, WORKSPACE_EVENTS, { id: otherSpace });
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');
    const bus = t.server.ctx.bus;
    // The first event makes the topic's policy read the database: the others wait behind it,
    // and the end of the subscription waits for them.
    void bus.publish(
      workspaceEvent(serverId, 'ChannelCreated', {
        audience: { kind: 'workspace' },
        conversationId: '00000000-0000-7000-8000-00000000c0de',
        name: 'new',
      }),
    );
    void bus.publish(
      workspaceEvent(serverId, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, n: 1 }),
    );
    void bus.publishResync([`workspace:${serverId}`]);
    await told.waitDone();
    expect(told.error).toBeNull();
    expect(
      told
        .events('workspaceEvents')
        .map((e) => e.type)
        .filter((type) => type !== 'PresencesChanged'),
    ).toEqual(['ChannelCreated', 'WorkspaceUpdated']);
    // The other workspace's subscription goes on.
    await bus.publish(
      workspaceEvent(otherSpace, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, n: 2 }),
    );
    await until(() => updates(elsewhere).length === 1, 'the other workspace’s event');
    expect(elsewhere.completed).toBe(false);
    expect(await t.subscriptions()).toBe(1);
    for (const c of clients.splice(0)) await c.dispose();
    await until(async () => (await t.subscriptions()) === 0, 'subscriptions to end');
  });

  it('closes a client that stops reading with 4008, and the others get everything', async () => {
    const slow = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    slow.send({ type: 'connection_init' });
    await slow.next((m) => m.type === 'connection_ack');
    slow.send({
      id: 's',
      type: 'subscribe',
      payload: { query: WORKSPACE_EVENTS, variables: { id: serverId } },
    });
    const fast = modernClient(t.wsUrl, alice);
    clients.push(fast);
    const sub = new Collected(fast, WORKSPACE_EVENTS, { id: serverId });
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');

    // The slow client stops reading its socket.
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    const blob = 'x'.repeat(64 * 1024);
    const count = 400;
    for (let n = 0; n < count; n += 1) {
      await t.server.ctx.bus.publish(
        workspaceEvent(serverId, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, n, blob }),
      );
      // Events arrive over time, as they do: sockets get to write (and readers to read).
      await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => updates(sub).length === count, `${count} events for the fast client`, 20_000);
    expect(updates(sub).map((e) => e.payload.n)).toEqual(
      Array.from({ length: count }, (_, n) => n),
    );
    // The slow one was let go: its place and subscription are freed at once.
    await until(async () => (await t.connections()) === 1, 'the slow client to be dropped');
    expect(await t.subscriptions()).toBe(1);
    socket.resume();
    expect(await slow.waitClosed(30_000)).toEqual({ code: 4008, reason: 'slow consumer' });
    expect(slow.of('s').length).toBeLessThan(count);
  });
});

/** Keeps the event loop busy until a whole load window reads it as saturated. */
function saturate(t: RealtimeTestServer): void {
  const deadline = performance.now() + 2000;
  while (t.server.ctx.requestLoad.sustained() < 0.95 && performance.now() < deadline) {
    // Busy on purpose: a process with no room to spare.
  }
  expect(t.server.ctx.requestLoad.sustained()).toBeGreaterThanOrEqual(0.95);
}

// SVC_WS_WRITE_GATHER_MS: on a busy process a client's frames wait for each other and leave in
// one write; nothing is lost or reordered, and the wait does not make a fast client look slow.
describe('fan-out on a busy process', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let serverId: string;
  const clients: Client[] = [];
  const gathered = async () =>
    (await t.server.ctx.metrics.wsGatheredFlushes.get()).values[0]?.value ?? 0;

  beforeAll(async () => {
    t = await startRealtime({
      overrides: { realtime: { maxBufferedBytes: 64 * 1024, writeGatherMs: 400 } },
    });
    alice = await t.signUp();
    serverId = (await createWorkspace(t, alice, 'Busy')).id;
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  it('holds a client’s events past their turn and sends them together, in order', async () => {
    const client = modernClient(t.wsUrl, alice);
    clients.push(client);
    const sub = new Collected(client, WORKSPACE_EVENTS, { id: serverId });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    await until(() => t.server.ctx.services.presence.settled(), 'presence to settle');
    const before = await gathered();
    // A flush already scheduled for the end of a turn (the presence announcement that the outbox
    // publishes after its commit may land just now) would take the first event with it: let it run.
    await new Promise((resolve) => setImmediate(resolve));
    saturate(t);
    const sent = performance.now();
    for (let n = 0; n < 3; n += 1) {
      await t.server.ctx.bus.publish(
        workspaceEvent(serverId, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, n }),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(updates(sub)).toEqual([]);
    await until(() => updates(sub).length === 3, 'the three events');
    // Held for most of the 400 ms the saturated loop allows, not sent at the end of the turn.
    expect(performance.now() - sent).toBeGreaterThan(200);
    expect(updates(sub).map((e) => e.payload.n)).toEqual([0, 1, 2]);
    expect((await gathered()) - before).toBe(1);
  });

  it('writes what it holds before taking a client past the buffer limit for a slow one', async () => {
    const client = modernClient(t.wsUrl, alice);
    clients.push(client);
    const sub = new Collected(client, WORKSPACE_EVENTS, { id: serverId });
    await until(async () => (await t.subscriptions()) === 2, 'the second subscription');
    const already = updates(sub).length;
    saturate(t);
    // 40 events of 8 KiB, five times the 64 KiB limit, all within one held write.
    const blob = 'x'.repeat(8 * 1024);
    for (let n = 0; n < 40; n += 1) {
      await t.server.ctx.bus.publish(
        workspaceEvent(serverId, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, n, blob }),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => updates(sub).length === already + 40, 'the 40 events');
    expect(
      updates(sub)
        .slice(already)
        .map((e) => e.payload.n),
    ).toEqual(Array.from({ length: 40 }, (_, n) => n));
    expect(await t.connections()).toBe(2);
    expect(sub.completed).toBe(false);
  });
});
