import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';

import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  sendMessage,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
} from './_helpers.js';

const JOINED_ONLY = `subscription($id: ID!) {
  workspaceEvents(serverId: $id, joinedChannelsOnly: true) { type serverId conversationId at payload }
}`;

// workspaceEvents(serverId, joinedChannelsOnly: true): a public channel's events reach its
// members only (and the leaver their own leaving); the default stream keeps every public channel.
describe('workspace events of joined channels only', () => {
  let t: RealtimeTestServer;
  let alice: Agent; // owner
  let bob: Agent; // member, subscribed both ways
  let carol: Agent; // member
  let space: { id: string; channels: Record<string, string> };
  let quiet: string; // a public channel bob is not in at first
  let client: Client;
  let all: Collected;
  let joined: Collected;

  const texts = (c: Collected) =>
    c
      .events('workspaceEvents')
      .filter((e) => e.type === 'MessageCreated')
      .map((e) => e.payload.message?.text ?? e.payload.text);
  const about = (c: Collected, type: string, userId: string) =>
    c
      .events('workspaceEvents')
      .filter((e) => e.type === type && e.conversationId === quiet && e.payload.userId === userId);

  /** A message in #general, which bob is in: once both streams have it, both saw what came before. */
  async function barrier(label: string): Promise<void> {
    await sendMessage(t, alice, space.channels.general!, label);
    for (const c of [all, joined]) await until(() => texts(c).includes(label), label);
  }

  async function gqlOk(query: string, variables: Record<string, unknown>, agent: Agent) {
    const res = await t.gql(query, variables, agent);
    expect(res.errors).toBeUndefined();
    return res.data!;
  }

  beforeAll(async () => {
    t = await startRealtime();
    [alice, bob, carol] = [await t.signUp(), await t.signUp(), await t.signUp()];
    space = await createWorkspace(t, alice, 'Joined');
    await joinWorkspace(t, alice, bob, space.id);
    await joinWorkspace(t, alice, carol, space.id);
    const created = await gqlOk(
      `mutation($s: ID!) {
        createChannel(input: { serverId: $s, name: "quiet", isPrivate: false }) { id }
      }`,
      { s: space.id },
      alice,
    );
    quiet = created.createChannel.id;
    client = modernClient(t.wsUrl, bob);
    all = new Collected(client, WORKSPACE_EVENTS, { id: space.id });
    joined = new Collected(client, JOINED_ONLY, { id: space.id });
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');
  });
  afterAll(async () => {
    await client?.dispose();
    await t?.stop();
  });

  it('leaves out a public channel the subscriber is not in, and keeps the rest', async () => {
    await sendMessage(t, alice, quiet, 'in quiet');
    await gqlOk(
      'mutation($c: ID!) { joinChannel(conversationId: $c) { id } }',
      { c: quiet },
      carol,
    );
    await barrier('b1');
    expect(texts(all)).toContain('in quiet');
    expect(texts(joined)).not.toContain('in quiet');
    expect(about(all, 'MemberAddedToConversation', carol.id)).toHaveLength(1);
    expect(about(joined, 'MemberAddedToConversation', carol.id)).toHaveLength(0);
  });

  it('follows the subscriber joining and leaving: their own events, then the channel’s', async () => {
    await gqlOk('mutation($c: ID!) { joinChannel(conversationId: $c) { id } }', { c: quiet }, bob);
    await sendMessage(t, alice, quiet, 'quiet, bob in');
    await barrier('b2');
    expect(about(joined, 'MemberAddedToConversation', bob.id)).toHaveLength(1);
    expect(texts(joined)).toContain('quiet, bob in');

    await gqlOk('mutation($c: ID!) { leaveChannel(conversationId: $c) }', { c: quiet }, bob);
    await sendMessage(t, alice, quiet, 'quiet, bob out');
    await barrier('b3');
    // The leaving reaches the leaver; what follows in the channel does not.
    expect(about(joined, 'MemberRemovedFromConversation', bob.id)).toHaveLength(1);
    expect(texts(joined)).not.toContain('quiet, bob out');
    expect(texts(all)).toContain('quiet, bob out');
  });
});
