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

// A connection makes its logger, and an operation its child logger, only when something logs
// (an idle subscriber never does). The lines must read as if they had been made up front: the
// connection's bindings on each, and the operation's request_id on an operation's lines.
describe('log lines of a WebSocket connection', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let space: { id: string };
  const lines = (msg: string) => t.server.logs.lines.filter((l) => l.msg === msg);

  beforeAll(async () => {
    t = await startRealtime();
    alice = await t.signUp();
    space = await createWorkspace(t, alice, 'Logs');
  });
  afterAll(async () => t?.stop());

  it('carry the connection, its protocol and, for an operation, the request id', async () => {
    const before = lines('websocket connected').length;
    const client = modernClient(t.wsUrl, alice);
    const sub = new Collected(client, WORKSPACE_EVENTS, { id: space.id });
    await until(async () => (await t.subscriptions()) === 1, 'the subscription');
    const connected = lines('websocket connected')[before]!;
    expect(connected).toMatchObject({
      subsystem: 'ws',
      protocol: 'graphql-transport-ws',
      account: alice.id,
    });
    expect(connected.connection).toEqual(expect.any(String));

    // A field that fails unexpectedly is masked as INTERNAL and logged under the request id.
    const event = workspaceEvent(space.id, 'WorkspaceUpdated', { audience: { kind: 'workspace' } });
    Object.defineProperty(event.payload, 'broken', {
      enumerable: true,
      get: () => {
        throw new Error('unreadable field');
      },
    });
    await t.server.ctx.bus.publish(event);
    await until(() => sub.results.some((r) => r.errors?.length), 'the failed result');
    const error = sub.results.find((r) => r.errors?.length)!.errors![0]!;
    expect(error.extensions).toMatchObject({ code: 'INTERNAL' });
    const failed = lines('resolver failed').at(-1)!;
    expect(failed).toMatchObject({
      subsystem: 'ws',
      protocol: 'graphql-transport-ws',
      connection: connected.connection,
      request_id: error.extensions!.request_id,
    });

    await client.dispose();
    await until(
      () => lines('websocket released').some((l) => l.connection === connected.connection),
      'the released line',
    );
  });

  it('name the legacy protocol on the lines of a graphql-ws connection', async () => {
    const raw = await RawClient.open(t.wsUrl, 'graphql-ws', alice);
    try {
      raw.send({ type: 'connection_init' });
      await raw.next((m) => m.type === 'connection_ack');
      raw.send('not json');
      await raw.next((m) => m.type === 'connection_error');
      const invalid = lines('invalid websocket message').at(-1)!;
      expect(invalid).toMatchObject({ subsystem: 'ws', protocol: 'graphql-ws' });
      expect(invalid.reason).toEqual(expect.any(String));
      const connected = lines('websocket connected').find(
        (l) => l.connection === invalid.connection,
      );
      expect(connected).toMatchObject({ protocol: 'graphql-ws', account: alice.id });
    } finally {
      raw.ws.close();
    }
  });
});
