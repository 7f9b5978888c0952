import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';

import {
  Collected,
  createWorkspace,
  modernClient,
  RawClient,
  RELAY_STREAM,
  sendMessage,
  startRealtime,
  until,
  WORKSPACE_EVENTS,
  workspaceEvent,
  type RealtimeTestServer,
} from './_helpers.js';

// GET /api/ws rules 4, 6 and 7 over graphql-transport-ws (the graphql-ws client package), and
// the legacy graphql-ws protocol over a raw socket.
describe('operations on the WebSocket', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let space: { id: string; channels: Record<string, string> };
  const clients: Client[] = [];
  const client = (agent: Agent) => {
    const c = modernClient(t.wsUrl, agent);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    t = await startRealtime({ env: { SVC_RATE_SUBSCRIPTIONS_PER_CONNECTION: '2' } });
    alice = await t.signUp();
    space = await createWorkspace(t, alice, 'Ops');
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.dispose();
    await until(async () => (await t.connections()) === 0, 'connections to close');
    expect(await t.subscriptions()).toBe(0);
  });
  afterAll(async () => t?.stop());

  it('delivers a workspace event with its envelope', async () => {
    const sub = new Collected(client(alice), WORKSPACE_EVENTS, { id: space.id });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    await t.server.ctx.bus.publish(
      workspaceEvent(space.id, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, name: 'X' }),
    );
    // Other events (alice's own presence) may come too: look for this one.
    await until(
      () => sub.events('workspaceEvents').some((e) => e.type === 'WorkspaceUpdated'),
      'WorkspaceUpdated',
    );
    const event = sub.events('workspaceEvents').find((e) => e.type === 'WorkspaceUpdated');
    expect(event).toMatchObject({
      type: 'WorkspaceUpdated',
      serverId: space.id,
      conversationId: null,
      payload: { name: 'X' },
    });
    expect(event!.payload).not.toHaveProperty('audience');
    expect(new Date(event!.at).toISOString()).toBe(event!.at);
  });

  it('delivers a message sent through POST /api', async () => {
    const general = Object.values(space.channels)[0]!;
    const sub = new Collected(client(alice), WORKSPACE_EVENTS, { id: space.id });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    const id = await sendMessage(t, alice, general, 'hello there');
    await until(
      () => sub.events('workspaceEvents').some((e) => e.type === 'MessageCreated'),
      'MessageCreated',
    );
    const created = sub.events('workspaceEvents').find((e) => e.type === 'MessageCreated')!;
    expect(created.conversationId).toBe(general);
    expect(JSON.stringify(created.payload)).toContain(id);
  });

  it('refuses queries and mutations with one VALIDATION error, runs nothing, completes', async () => {
    const c = client(alice);
    for (const query of [
      '{ me { id } }',
      'mutation { logout }',
      'query Q { serverInfo { version } }',
    ]) {
      const op = new Collected(c, query);
      await op.waitDone();
      expect(op.completed, query).toBe(true);
      expect(op.results).toHaveLength(1);
      expect(op.results[0]!.data).toBeUndefined();
      expect(op.results[0]!.errors).toHaveLength(1);
      expect(op.results[0]!.errors![0]).toMatchObject({
        message: 'only subscriptions over the WebSocket',
        extensions: { code: 'VALIDATION' },
      });
    }
    // `logout` did not run: the session still works.
    const me = await t.gql('{ me { id } }', {}, alice);
    expect(me.data?.me.id).toBe(alice.id);
    // The connection is still usable.
    const sub = new Collected(c, WORKSPACE_EVENTS, { id: space.id });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    sub.unsubscribe();
  });

  it('answers GraphQL errors of the document with the protocol error message', async () => {
    const bad = new Collected(client(alice), 'subscription { nope }');
    await bad.waitDone();
    expect(bad.completed).toBe(false);
    expect((bad.error as Array<{ message: string }>)[0]!.message).toMatch(/nope/);
    const syntax = new Collected(client(alice), 'subscription {');
    await syntax.waitDone();
    expect((syntax.error as Array<{ message: string }>)[0]!.message).toMatch(/Syntax Error/);
  });

  it('answers NOT_FOUND to a workspace the caller is not in', async () => {
    const bob = await t.signUp();
    const sub = new Collected(client(bob), WORKSPACE_EVENTS, { id: space.id });
    await sub.waitDone();
    expect(sub.completed).toBe(true);
    expect(sub.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND' });
    const nonsense = new Collected(client(bob), WORKSPACE_EVENTS, { id: 'not-an-id' });
    await nonsense.waitDone();
    expect(nonsense.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(await t.subscriptions()).toBe(0);
  });

  it('refuses a subscription past the per-connection limit; ending one frees its place', async () => {
    const c = client(alice);
    const first = new Collected(c, WORKSPACE_EVENTS, { id: space.id });
    const second = new Collected(c, RELAY_STREAM);
    await until(async () => (await t.subscriptions()) === 2, 'two subscriptions');
    const third = new Collected(c, RELAY_STREAM);
    await third.waitDone();
    expect(third.results).toHaveLength(1);
    expect(third.results[0]!.errors).toEqual([
      expect.objectContaining({
        extensions: expect.objectContaining({ code: 'TOO_MANY_SUBSCRIPTIONS', limit: 2 }),
      }),
    ]);
    // Another connection has its own places.
    const other = new Collected(client(alice), RELAY_STREAM);
    await until(async () => (await t.subscriptions()) === 3, 'a subscription elsewhere');
    other.unsubscribe();
    second.unsubscribe();
    await until(async () => (await t.subscriptions()) === 1, 'the place to be freed');
    const fourth = new Collected(c, RELAY_STREAM);
    await until(async () => (await t.subscriptions()) === 2, 'the freed place to be taken');
    expect(fourth.error).toBeNull();
    expect(first.completed).toBe(false);
  });

  it('answers ping with pong', async () => {
    const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    raw.send({ type: 'connection_init' });
    await raw.next((m) => m.type === 'connection_ack');
    raw.send({ type: 'ping', payload: { n: 1 } });
    expect(await raw.next()).toEqual({ type: 'pong', payload: { n: 1 } });
    raw.close();
    await raw.waitClosed();
  });
});

describe('the legacy graphql-ws protocol', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let space: { id: string; channels: Record<string, string> };

  beforeAll(async () => {
    t = await startRealtime({ env: { SVC_RATE_SUBSCRIPTIONS_PER_CONNECTION: '1' } });
    alice = await t.signUp();
    space = await createWorkspace(t, alice, 'Legacy');
  });
  afterEach(async () => {
    await until(async () => (await t.connections()) === 0, 'connections to close');
    expect(await t.subscriptions()).toBe(0);
  });
  afterAll(async () => t?.stop());

  async function initialized(): Promise<RawClient> {
    const raw = await RawClient.open(t.wsUrl, 'graphql-ws', alice);
    raw.send({ type: 'connection_init', payload: {} });
    expect(await raw.next()).toEqual({ type: 'connection_ack' });
    expect(await raw.next()).toEqual({ type: 'ka' });
    return raw;
  }

  it('runs init, start, data, stop, complete and connection_terminate', async () => {
    const raw = await initialized();
    raw.send({
      id: '1',
      type: 'start',
      payload: { query: WORKSPACE_EVENTS, variables: { id: space.id } },
    });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    await t.server.ctx.bus.publish(
      workspaceEvent(space.id, 'WorkspaceUpdated', { audience: { kind: 'workspace' }, name: 'L' }),
    );
    const data = await raw.next(
      (m) => m.id === '1' && m.payload?.data?.workspaceEvents?.type === 'WorkspaceUpdated',
    );
    expect(data).toMatchObject({
      id: '1',
      type: 'data',
      payload: { data: { workspaceEvents: { type: 'WorkspaceUpdated', payload: { name: 'L' } } } },
    });
    raw.send({ id: '1', type: 'stop' });
    expect(await raw.next((m) => m.id === '1' && m.type === 'complete')).toEqual({
      id: '1',
      type: 'complete',
    });
    await until(async () => (await t.subscriptions()) === 0, 'the stop');
    raw.send({ type: 'connection_terminate' });
    expect((await raw.waitClosed()).code).toBe(1000);
  });

  it('answers queries with one VALIDATION error as data, then complete', async () => {
    const raw = await initialized();
    raw.send({ id: 'q', type: 'start', payload: { query: 'mutation { logout }' } });
    const data = await raw.next((m) => m.id === 'q');
    expect(data).toEqual({
      id: 'q',
      type: 'data',
      payload: {
        errors: [
          {
            message: 'only subscriptions over the WebSocket',
            extensions: expect.objectContaining({ code: 'VALIDATION' }),
          },
        ],
      },
    });
    expect(await raw.next((m) => m.id === 'q')).toEqual({ id: 'q', type: 'complete' });
    expect((await t.gql('{ me { id } }', {}, alice)).data?.me.id).toBe(alice.id);
    raw.close();
  });

  it('answers TOO_MANY_SUBSCRIPTIONS with its limit, and validation errors, as data', async () => {
    const raw = await initialized();
    raw.send({ id: 'a', type: 'start', payload: { query: RELAY_STREAM } });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    raw.send({ id: 'b', type: 'start', payload: { query: RELAY_STREAM } });
    const refused = await raw.next((m) => m.id === 'b');
    expect(refused.payload.errors[0].extensions).toMatchObject({
      code: 'TOO_MANY_SUBSCRIPTIONS',
      limit: 1,
    });
    expect(await raw.next((m) => m.id === 'b')).toEqual({ id: 'b', type: 'complete' });
    raw.send({ id: 'c', type: 'start', payload: { query: 'subscription { nope }' } });
    expect((await raw.next((m) => m.id === 'c')).payload.errors[0].message).toMatch(/nope/);
    expect((await raw.next((m) => m.id === 'c')).type).toBe('complete');
    raw.close();
  });

  it('replaces an operation started again under the same id', async () => {
    const raw = await initialized();
    raw.send({ id: 'x', type: 'start', payload: { query: RELAY_STREAM } });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    raw.send({
      id: 'x',
      type: 'start',
      payload: { query: WORKSPACE_EVENTS, variables: { id: space.id } },
    });
    // The replacement is live once an event of its workspace arrives (published until then).
    await until(async () => {
      await t.server.ctx.bus.publish(
        workspaceEvent(space.id, 'WorkspaceUpdated', {
          audience: { kind: 'workspace' },
          name: 'R',
        }),
      );
      return raw.of('x').some((m) => m.payload?.data?.workspaceEvents);
    }, 'an event of the replacement');
    // The limit is 1: the replacement took the place of the first.
    expect(await t.subscriptions()).toBe(1);
    raw.close();
  });
});
