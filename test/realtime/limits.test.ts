import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { Agent } from '../_util/app.js';

import {
  createWorkspace,
  RawClient,
  RELAY_STREAM,
  startRealtime,
  until,
  type RealtimeTestServer,
} from './_helpers.js';

const KIB = 1024;

/** A ping whose payload makes the frame exactly `bytes` long. */
function pingOfSize(bytes: number): string {
  const empty = JSON.stringify({ type: 'ping', payload: { x: '' } });
  return JSON.stringify({ type: 'ping', payload: { x: 'a'.repeat(bytes - empty.length) } });
}

/** Sends `frames` in one write, so the server receives them together. */
function sendTogether(raw: RawClient, frames: string[]): void {
  const socket = (raw.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
  socket.cork();
  for (const f of frames) raw.ws.send(f);
  process.nextTick(() => socket.uncork());
}

// GET /api/ws rule 5 and the bad input of the issue, each followed by a leak check.
describe('message limits and bad input', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let serverId: string;

  beforeAll(async () => {
    t = await startRealtime({ overrides: { realtime: { initTimeoutMs: 300 } } });
    alice = await t.signUp();
    serverId = (await createWorkspace(t, alice, 'Limits')).id;
  });
  afterEach(async () => {
    // No leak: every connection and subscription is released.
    await until(async () => (await t.connections()) === 0, 'connections to be released');
    expect(await t.subscriptions()).toBe(0);
    expect(t.server.realtime.fanout.topicCount()).toBe(0);
  });
  afterAll(async () => t?.stop());

  async function modern(): Promise<RawClient> {
    const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    raw.send({ type: 'connection_init' });
    await raw.next((m) => m.type === 'connection_ack');
    return raw;
  }

  async function subscribed(raw: RawClient, id: string): Promise<void> {
    const before = await t.subscriptions();
    raw.send({ id, type: 'subscribe', payload: { query: RELAY_STREAM } });
    await until(async () => (await t.subscriptions()) > before, 'the subscription');
  }

  it('accepts a message of 256 KiB and closes with 1009 above, whole', async () => {
    const raw = await modern();
    raw.ws.send(pingOfSize(256 * KIB));
    expect((await raw.next()).type).toBe('pong');
    await subscribed(raw, 's');
    raw.ws.send(pingOfSize(256 * KIB + 1));
    expect(await raw.waitClosed()).toEqual({ code: 1009, reason: 'message too large' });
  });

  it('closes with 1009 when fragments add up to more than 256 KiB', async () => {
    const raw = await modern();
    const ok = pingOfSize(200 * KIB);
    raw.ws.send(ok.slice(0, 100 * KIB), { fin: false });
    raw.ws.send(ok.slice(100 * KIB), { fin: true });
    expect((await raw.next()).type).toBe('pong');
    await subscribed(raw, 's');
    const big = pingOfSize(300 * KIB);
    for (let i = 0; i < 3; i += 1) {
      raw.ws.send(big.slice(i * 100 * KIB, (i + 1) * 100 * KIB), { fin: false });
    }
    raw.ws.send(big.slice(300 * KIB), { fin: true });
    expect(await raw.waitClosed()).toEqual({ code: 1009, reason: 'message too large' });
  });

  it('closes the legacy protocol with 1009 too', async () => {
    const raw = await RawClient.open(t.wsUrl, 'graphql-ws', alice);
    raw.ws.send(pingOfSize(256 * KIB + 10));
    expect(await raw.waitClosed()).toEqual({ code: 1009, reason: 'message too large' });
  });

  it('handles 32 waiting messages and closes with 1008 at more', async () => {
    const start = (i: number) =>
      JSON.stringify({ id: `s${i}`, type: 'subscribe', payload: { query: RELAY_STREAM } });
    const ok = await modern();
    sendTogether(
      ok,
      Array.from({ length: 32 }, (_, i) => start(i)),
    );
    await until(async () => (await t.subscriptions()) === 32, '32 subscriptions');
    expect(ok.closeInfo).toBeNull();
    ok.close();
    await ok.waitClosed();
    await until(async () => (await t.subscriptions()) === 0, 'the subscriptions to end');

    const flood = await modern();
    sendTogether(
      flood,
      Array.from({ length: 100 }, (_, i) => start(i)),
    );
    expect(await flood.waitClosed()).toEqual({ code: 1008, reason: 'too many messages' });
  });

  it.each([
    ['garbage', (raw: RawClient) => raw.send('{not json'), 4400],
    ['a binary frame', (raw: RawClient) => raw.ws.send(Buffer.from('{"type":"ping"}')), 4400],
    ['an unknown message type', (raw: RawClient) => raw.send({ type: 'hello' }), 4400],
    [
      'a message only servers send',
      (raw: RawClient) => raw.send({ id: '1', type: 'next', payload: {} }),
      4400,
    ],
    ['a second connection_init', (raw: RawClient) => raw.send({ type: 'connection_init' }), 4429],
    [
      'a duplicate subscription id',
      (raw: RawClient) =>
        raw.send({ id: 's', type: 'subscribe', payload: { query: RELAY_STREAM } }),
      4409,
    ],
  ])('graphql-transport-ws closes on %s', async (_name, act, code) => {
    const raw = await modern();
    await subscribed(raw, 's');
    act(raw);
    expect((await raw.waitClosed()).code).toBe(code);
  });

  it('graphql-transport-ws closes a subscribe before connection_init with 4401', async () => {
    const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    raw.send({ id: '1', type: 'subscribe', payload: { query: RELAY_STREAM } });
    expect(await raw.waitClosed()).toEqual({ code: 4401, reason: 'Unauthorized' });
  });

  it('graphql-transport-ws closes with 4408 when connection_init never comes', async () => {
    const raw = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    expect(await raw.waitClosed()).toEqual({
      code: 4408,
      reason: 'Connection initialisation timeout',
    });
  });

  it('the legacy protocol answers bad frames and keeps the connection', async () => {
    const raw = await RawClient.open(t.wsUrl, 'graphql-ws', alice);
    raw.send({ id: '1', type: 'start', payload: { query: RELAY_STREAM } });
    expect(await raw.next()).toEqual({
      type: 'error',
      id: '1',
      payload: { message: 'send connection_init first' },
    });
    raw.send({ type: 'connection_init' });
    expect(await raw.next()).toEqual({ type: 'connection_ack' });
    expect(await raw.next()).toEqual({ type: 'ka' });
    raw.send({ type: 'connection_init' });
    expect(await raw.next()).toEqual({ type: 'connection_ack' });
    raw.send({ id: '2', type: 'start', payload: { query: RELAY_STREAM } });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    raw.send('{not json');
    expect(await raw.next((m) => m.type !== 'ka')).toMatchObject({ type: 'connection_error' });
    raw.ws.send(Buffer.from('{"type":"connection_init"}'));
    expect(await raw.next((m) => m.type !== 'ka')).toEqual({
      type: 'connection_error',
      payload: { message: 'binary frames are not accepted' },
    });
    raw.send({ id: '3', type: 'bogus' });
    expect(await raw.next((m) => m.type !== 'ka')).toMatchObject({ type: 'error', id: '3' });
    raw.send({ type: 'start', payload: { query: RELAY_STREAM } });
    expect(await raw.next((m) => m.type !== 'ka')).toMatchObject({ type: 'error' });
    raw.send({ id: '4', type: 'start', payload: { query: 42 } });
    expect(await raw.next((m) => m.type !== 'ka')).toMatchObject({ type: 'error', id: '4' });
    expect(raw.closeInfo).toBeNull();
    expect(await t.subscriptions()).toBe(1);
    raw.close();
    await raw.waitClosed();
  });

  it('releases everything when a client goes away mid-operation', async () => {
    for (let i = 0; i < 5; i += 1) {
      const raw = await modern();
      raw.send({ id: 'w', type: 'subscribe', payload: { query: RELAY_STREAM } });
      raw.send({
        id: 'x',
        type: 'subscribe',
        payload: {
          query: 'subscription($id: ID!) { workspaceEvents(serverId: $id) { type } }',
          variables: { id: serverId },
        },
      });
      raw.ws.terminate();
    }
  });
});

describe('keep-alive', () => {
  let t: RealtimeTestServer;
  let alice: Agent;

  beforeAll(async () => {
    t = await startRealtime({ overrides: { realtime: { keepAliveMs: 100 } } });
    alice = await t.signUp();
  });
  afterAll(async () => t?.stop());

  it('pings every socket and terminates one that stops answering', async () => {
    const live = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    const dead = new RawClient(t.wsUrl, 'graphql-ws', alice, { autoPong: false });
    await dead.opened;
    dead.send({ type: 'connection_init' });
    dead.send({ id: '1', type: 'start', payload: { query: RELAY_STREAM } });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    // The legacy protocol also gets `ka` at each round.
    await dead.next((m) => m.type === 'ka');
    expect((await dead.waitClosed()).code).toBe(1006);
    await until(async () => (await t.connections()) === 1, 'the dead socket to be released');
    expect(await t.subscriptions()).toBe(0);
    expect(live.closeInfo).toBeNull();
    live.close();
    await live.waitClosed();
  });
});
