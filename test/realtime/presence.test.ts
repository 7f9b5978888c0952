import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';
import { ManualClock } from '../../src/lib/clock.js';

import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  RELAY_STREAM,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
} from './_helpers.js';

const AWAY_AFTER = 10 * 60_000;
const PRESENCE = 'query($u: [ID!]!) { presence(userIds: $u) { userId status } }';

// Online while a connection is open, away when idle or by choice, offline otherwise; changes
// reach the people who share a workspace or conversation, debounced; users can hide it.
describe('presence', () => {
  const clock = new ManualClock();
  let t: RealtimeTestServer;
  let alice: Agent;
  let bob: Agent;
  let dave: Agent;
  let space: { id: string };
  let watcher: Client;
  let bobsWorkspace: Collected;
  let bobsRelay: Collected;

  /**
   * Statuses of alice seen by bob so far, on one of his streams: `PresenceChanged` on his own
   * topic, the changes of `PresencesChanged` on a workspace's.
   */
  const statuses = (stream: Collected, field: string) =>
    stream.events(field).flatMap((e) => {
      if (e.type === 'PresenceChanged')
        return e.payload.userId === alice.id ? [e.payload.status] : [];
      if (e.type !== 'PresencesChanged') return [];
      return (e.payload.changes as Array<{ userId: string; status: string }>)
        .filter((c) => c.userId === alice.id)
        .map((c) => c.status);
    });

  const seen = () => statuses(bobsWorkspace, 'workspaceEvents');

  beforeAll(async () => {
    t = await startRealtime({
      clock,
      overrides: { presence: { offlineGraceMs: 1_500, sweepMs: 50, awayAfterMs: AWAY_AFTER } },
    });
    alice = await t.signUp();
    bob = await t.signUp();
    dave = await t.signUp();
    space = await createWorkspace(t, alice);
    await joinWorkspace(t, alice, bob, space.id);
    await t.gql(
      'mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) { conversation { id } } }',
      { m: [alice.id] },
      bob,
    );
    watcher = modernClient(t.wsUrl, bob);
    bobsWorkspace = new Collected(watcher, WORKSPACE_EVENTS, { id: space.id });
    bobsRelay = new Collected(watcher, RELAY_STREAM);
    await until(async () => (await t.subscriptions()) === 2, 'bob’s subscriptions');
  });
  afterAll(async () => {
    await watcher?.dispose();
    await t?.stop();
  });

  async function presenceOf(viewer: Agent, id: string): Promise<string> {
    const res = await t.gql(PRESENCE, { u: [id] }, viewer);
    return res.data!.presence[0].status;
  }

  it('shows a user online while connected, to workspace members and conversation partners', async () => {
    expect(await presenceOf(bob, alice.id)).toBe('OFFLINE');
    const client = modernClient(t.wsUrl, alice);
    await until(() => seen().includes('ONLINE'), 'ONLINE in the workspace');
    await until(
      () => statuses(bobsRelay, 'relayStream').includes('ONLINE'),
      'ONLINE on relayStream',
    );
    expect(await presenceOf(bob, alice.id)).toBe('ONLINE');
    // Someone who shares nothing with alice sees her offline.
    expect(await presenceOf(dave, alice.id)).toBe('OFFLINE');

    // A reconnect inside the grace period does not flap.
    await client.dispose();
    await until(async () => (await t.connections()) === 1, 'alice to disconnect');
    const again = modernClient(t.wsUrl, alice);
    await until(async () => (await t.connections()) === 2, 'alice to reconnect');
    await until(() => t.server.ctx.services.presence.settled(), 'presence to settle');
    expect(seen()).toEqual(['ONLINE']);

    // Gone for longer: offline.
    await again.dispose();
    await until(() => seen().includes('OFFLINE'), 'OFFLINE');
    expect(seen()).toEqual(['ONLINE', 'OFFLINE']);
    expect(await presenceOf(bob, alice.id)).toBe('OFFLINE');
  });

  it('turns away after the idle time and back online on activity', async () => {
    const client = modernClient(t.wsUrl, alice);
    await until(() => seen().at(-1) === 'ONLINE', 'ONLINE');
    clock.advance(AWAY_AFTER + 1_000);
    await until(() => seen().at(-1) === 'AWAY', 'AWAY after the idle time');
    expect(await presenceOf(bob, alice.id)).toBe('AWAY');
    const res = await t.gql('mutation { setPresence(choice: AUTO) { choice status } }', {}, alice);
    expect(res.data?.setPresence).toEqual({ choice: 'AUTO', status: 'ONLINE' });
    await until(() => seen().at(-1) === 'ONLINE', 'ONLINE again');
    await client.dispose();
    await until(() => seen().at(-1) === 'OFFLINE', 'OFFLINE');
  });

  it('lets a user appear away or hide it', async () => {
    const client = modernClient(t.wsUrl, alice);
    await until(() => seen().at(-1) === 'ONLINE', 'ONLINE');
    const away = await t.gql('mutation { setPresence(choice: AWAY) { choice status } }', {}, alice);
    expect(away.data?.setPresence).toEqual({ choice: 'AWAY', status: 'AWAY' });
    await until(() => seen().at(-1) === 'AWAY', 'AWAY by choice');

    const hidden = await t.gql(
      'mutation { setPresence(choice: INVISIBLE) { choice status } }',
      {},
      alice,
    );
    expect(hidden.data?.setPresence).toEqual({ choice: 'INVISIBLE', status: 'OFFLINE' });
    await until(() => seen().at(-1) === 'OFFLINE', 'OFFLINE while invisible');
    expect(await presenceOf(bob, alice.id)).toBe('OFFLINE');
    const mine = await t.gql('{ myPresence { choice status } }', {}, alice);
    expect(mine.data?.myPresence).toEqual({ choice: 'INVISIBLE', status: 'OFFLINE' });

    // Connections of an invisible user announce nothing.
    const count = seen().length;
    const second = modernClient(t.wsUrl, alice);
    await until(async () => (await t.connections()) === 3, 'a second connection');
    await second.dispose();
    await client.dispose();
    await until(async () => (await t.connections()) === 1, 'alice to leave');
    await until(() => t.server.ctx.services.presence.settled(), 'presence to settle');
    expect(seen()).toHaveLength(count);

    await t.gql('mutation { setPresence(choice: AUTO) { choice } }', {}, alice);
    const back = modernClient(t.wsUrl, alice);
    await until(() => seen().at(-1) === 'ONLINE', 'ONLINE when visible again');
    await back.dispose();
  });

  it('refuses a list of more than 200 users', async () => {
    const ids = Array.from({ length: 201 }, () => alice.id);
    const res = await t.gql(PRESENCE, { u: ids }, bob);
    expect(res.errors?.[0]?.extensions?.code).toBe('VALIDATION');
  });
});
