import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { signIn } from '../_util/seed.js';
import type { Agent } from '../_util/app.js';
import { ManualClock } from '../../src/lib/clock.js';

import {
  Collected,
  createWorkspace,
  modernClient,
  RawClient,
  RELAY_STREAM,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
} from './_helpers.js';

// Contract "Events", ways the session ends 1-4: a connection lives no longer than its session.
describe('a connection ends with its session', () => {
  let t: RealtimeTestServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    // The periodic recheck is off here: each case shows one way on its own.
    t = await startRealtime({ env: { SVC_WS_SESSION_RECHECK_SECS: '0' } });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.dispose();
    await until(async () => (await t.connections()) === 0, 'connections to be released');
    expect(await t.subscriptions()).toBe(0);
  });
  afterAll(async () => t?.stop());

  async function legacySubscribed(agent: Agent, serverId: string): Promise<RawClient> {
    const raw = await RawClient.open(t.wsUrl, 'graphql-ws', agent);
    raw.send({ type: 'connection_init' });
    await raw.next((m) => m.type === 'connection_ack');
    const before = await t.subscriptions();
    raw.send({ id: 'a', type: 'start', payload: { query: RELAY_STREAM } });
    raw.send({
      id: 'b',
      type: 'start',
      payload: { query: WORKSPACE_EVENTS, variables: { id: serverId } },
    });
    await until(async () => (await t.subscriptions()) === before + 2, 'two subscriptions');
    return raw;
  }

  it('logout closes at once with 4401 after completing every stream, and frees the place', async () => {
    const alice = await t.signUp();
    const { id } = await createWorkspace(t, alice);
    let closed: { code: number; reason: string } | null = null;
    const client = modernClient(t.wsUrl, alice, { onClose: (e) => (closed = e) });
    clients.push(client);
    const events = new Collected(client, WORKSPACE_EVENTS, { id });
    const relay = new Collected(client, RELAY_STREAM);
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');
    const raw = await legacySubscribed(alice, id);

    expect((await t.gql('mutation { logout }', {}, alice)).data?.logout).toBe(true);

    await until(() => closed !== null, 'the modern client to close');
    expect(closed).toMatchObject({ code: 4401, reason: 'session ended' });
    expect(events.completed && relay.completed).toBe(true);
    expect(await raw.waitClosed()).toEqual({ code: 4401, reason: 'session ended' });
    // Every stream was completed before the close, and nothing came after.
    const ids = raw.messages.filter((m) => m.type === 'complete').map((m) => m.id);
    expect(ids.sort()).toEqual(['a', 'b']);
    expect(raw.messages.at(-1)?.type).toBe('complete');
    await until(async () => (await t.connections()) === 0, 'the places to be freed');
  });

  it('logoutOtherSessions closes the other sessions, not the caller', async () => {
    const bob = await t.signUp();
    const other = await signIn(t.app, bob.username);
    const mine = await RawClient.open(t.wsUrl, 'graphql-ws', bob);
    const theirs = await RawClient.open(t.wsUrl, 'graphql-ws', other);
    await until(async () => (await t.connections()) === 2, 'two connections');
    expect(
      (await t.gql('mutation { logoutOtherSessions }', {}, bob)).data?.logoutOtherSessions,
    ).toBe(1);
    expect(await theirs.waitClosed()).toEqual({ code: 4401, reason: 'session ended' });
    await until(async () => (await t.connections()) === 1, 'one connection');
    expect(mine.closeInfo).toBeNull();
    mine.close();
    await mine.waitClosed();
  });

  it('re-checks the session before each operation and closes with 4401 instead of answering', async () => {
    const carol = await t.signUp();
    const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', carol);
    raw.send({ type: 'connection_init' });
    await raw.next((m) => m.type === 'connection_ack');
    raw.send({ id: '1', type: 'subscribe', payload: { query: RELAY_STREAM } });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    // Ended in the database behind this process's back: no announcement, no recheck.
    await t.server.ctx.db.kysely
      .updateTable('session')
      .set({ endedAt: Date.now(), endReason: 'logout' })
      .where('accountId', '=', carol.id)
      .execute();
    raw.send({ id: '2', type: 'subscribe', payload: { query: '{ me { id } }' } });
    expect(await raw.waitClosed()).toEqual({ code: 4401, reason: 'session ended' });
    expect(raw.of('2')).toEqual([]);
    expect(raw.of('1').at(-1)).toEqual({ id: '1', type: 'complete' });
  });

  it('finds sessions ended elsewhere with the periodic recheck', async () => {
    const other = await startRealtime({
      env: { SVC_WS_SESSION_RECHECK_SECS: '1' },
    });
    try {
      const dave = await other.signUp();
      const raw = await RawClient.open(other.wsUrl, 'graphql-transport-ws', dave);
      raw.send({ type: 'connection_init' });
      await raw.next((m) => m.type === 'connection_ack');
      await other.server.ctx.db.kysely
        .updateTable('session')
        .set({ endedAt: Date.now(), endReason: 'principal_blocked' })
        .where('accountId', '=', dave.id)
        .execute();
      expect(await raw.waitClosed(5_000)).toEqual({ code: 4401, reason: 'session ended' });
      await until(async () => (await other.connections()) === 0, 'the place to be freed');
    } finally {
      await other.stop();
    }
  });
});

describe('a connection ends when its session expires', () => {
  it('closes with 4401 at the expiry read when the connection opened', async () => {
    const clock = new ManualClock();
    const t = await startRealtime({ clock, env: { SVC_WS_SESSION_RECHECK_SECS: '0' } });
    try {
      const erin = await t.signUp();
      const row = await t.server.ctx.db.kysely
        .selectFrom('session')
        .select('expiresAt')
        .where('accountId', '=', erin.id)
        .executeTakeFirstOrThrow();
      clock.set(row.expiresAt - 200);
      const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', erin);
      raw.send({ type: 'connection_init' });
      await raw.next((m) => m.type === 'connection_ack');
      raw.send({ id: '1', type: 'subscribe', payload: { query: RELAY_STREAM } });
      await until(async () => (await t.subscriptions()) === 1, 'the subscription');
      clock.advance(1_000);
      expect(await raw.waitClosed()).toEqual({ code: 4401, reason: 'session ended' });
      expect(raw.of('1').at(-1)).toEqual({ id: '1', type: 'complete' });
      await until(async () => (await t.connections()) === 0, 'the place to be freed');
    } finally {
      await t.stop();
    }
  });
});
