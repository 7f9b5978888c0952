import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';

import {
  Collected,
  createWorkspace,
  joinWorkspace,
  modernClient,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  type RealtimeTestServer,
} from './_helpers.js';

// Presence on a workspace's topic is gathered (docs/realtime.md, "Presence"): a storm of
// sign-ins reaches each member as a few PresencesChanged events carrying everyone, not one
// event per person, so the deliveries grow with the members, not with their square.
describe('presence gathered per workspace', () => {
  const PEOPLE = 12;
  let t: RealtimeTestServer;
  let owner: Agent;
  let people: Agent[];
  let space: { id: string };
  const clients: Client[] = [];

  beforeAll(async () => {
    t = await startRealtime({ overrides: { presence: { batchMs: 400 } } });
    owner = await t.signUp();
    space = await createWorkspace(t, owner);
    people = [];
    for (let i = 0; i < PEOPLE; i++) {
      const p = await t.signUp();
      await joinWorkspace(t, owner, p, space.id);
      people.push(p);
    }
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await t?.stop();
  });

  it('announces a storm of sign-ins in a few events that carry every change', async () => {
    const watcher = modernClient(t.wsUrl, owner);
    clients.push(watcher);
    const stream = new Collected(watcher, WORKSPACE_EVENTS, { id: space.id });
    await until(async () => (await t.subscriptions()) >= 1, 'the subscription');
    const batches = () =>
      stream.events('workspaceEvents').filter((e) => e.type === 'PresencesChanged');
    const online = () =>
      new Set(
        batches().flatMap((e) =>
          (e.payload.changes as Array<{ userId: string; status: string }>)
            .filter((c) => c.status === 'ONLINE')
            .map((c) => c.userId),
        ),
      );
    const before = batches().length;
    // Everyone connects at once (a client connects when it subscribes).
    for (const p of people) {
      const c = modernClient(t.wsUrl, p);
      clients.push(c);
      new Collected(c, WORKSPACE_EVENTS, { id: space.id });
    }
    await until(() => people.every((p) => online().has(p.id)), 'everyone online');
    const events = batches().length - before;
    expect(events).toBeGreaterThanOrEqual(1);
    expect(events).toBeLessThan(PEOPLE / 2);
    // No per-person event on the workspace's topic.
    expect(stream.events('workspaceEvents').some((e) => e.type === 'PresenceChanged')).toBe(false);
  });
});
