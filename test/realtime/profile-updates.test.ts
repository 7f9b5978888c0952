import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';

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

const RENAME = 'mutation($n: String) { updateProfile(input: { displayName: $n }) { displayName } }';

// AccountUpdated: a new display name reaches the workspaces the person is in and the people
// they share a conversation with, so open pages show it without a reload; outsiders hear nothing.
describe('profile changes', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let bob: Agent;
  let carol: Agent;
  let dave: Agent;
  let space: { id: string };
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startRealtime();
    alice = await t.signUp();
    bob = await t.signUp();
    carol = await t.signUp();
    dave = await t.signUp();
    space = await createWorkspace(t, alice);
    await joinWorkspace(t, alice, bob, space.id);
    // Carol shares only a direct conversation with Alice; Dave shares nothing.
    await joinWorkspace(t, alice, carol, space.id);
    await t.gql(
      'mutation($m: [ID!]!) { createConversation(input: { memberIds: $m }) { conversation { id } } }',
      { m: [carol.id] },
      alice,
    );
    await t.gql('mutation($id: ID!) { leaveWorkspace(serverId: $id) }', { id: space.id }, carol);
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  it('announces a new display name to the workspace and to conversation partners', async () => {
    const bobClient = modernClient(t.wsUrl, bob);
    const carolClient = modernClient(t.wsUrl, carol);
    const daveClient = modernClient(t.wsUrl, dave);
    clients.push(bobClient, carolClient, daveClient);
    const bobs = new Collected(bobClient, WORKSPACE_EVENTS, { id: space.id });
    const carols = new Collected(carolClient, RELAY_STREAM);
    const daves = new Collected(daveClient, RELAY_STREAM);
    await until(async () => (await t.subscriptions()) === 3, 'three subscriptions');

    const renamed = await t.gql(RENAME, { n: 'Alice Renamed' }, alice);
    expect(renamed.data?.updateProfile.displayName).toBe('Alice Renamed');
    const seen = (c: Collected, field: string) =>
      c.events(field).filter((e) => e.type === 'AccountUpdated');
    await until(() => seen(bobs, 'workspaceEvents').length === 1, 'the workspace event');
    expect(seen(bobs, 'workspaceEvents')[0].payload).toEqual({
      userId: alice.id,
      displayName: 'Alice Renamed',
    });
    await until(() => seen(carols, 'relayStream').length === 1, 'the partner event');
    expect(seen(carols, 'relayStream')[0].payload).toEqual({
      userId: alice.id,
      displayName: 'Alice Renamed',
    });

    // The same name again changes nothing and announces nothing; clearing it is announced.
    await t.gql(RENAME, { n: 'Alice Renamed' }, alice);
    await t.gql(RENAME, { n: null }, alice);
    await until(() => seen(bobs, 'workspaceEvents').length === 2, 'the cleared name');
    expect(seen(bobs, 'workspaceEvents')[1].payload.displayName).toBeNull();
    expect(seen(daves, 'relayStream')).toEqual([]);
  });
});
