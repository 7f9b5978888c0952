import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR } from '../../src/auth/actor.js';
import type { Agent } from '../_util/app.js';

import {
  cookieHeader,
  RawClient,
  startRealtime,
  until,
  upgradeAnswer,
  type RealtimeTestServer,
} from './_helpers.js';

// GET /api/ws, rules 1-3 and the refusals every route under /api shares (origin, deny list).
describe('the WebSocket upgrade', () => {
  let t: RealtimeTestServer;
  let alice: Agent;
  let port: number;

  beforeAll(async () => {
    t = await startRealtime({
      env: {
        SVC_RATE_WS_CONNECTIONS_PER_USER: '2',
        SVC_CORS_ALLOWED_ORIGIN: 'https://app.example',
      },
      overrides: { ipBlockRefreshMs: 50 },
    });
    alice = await t.signUp();
    port = t.server.address.port;
  });
  afterAll(async () => t?.stop());

  it('upgrades with either subprotocol and a session', async () => {
    for (const protocol of ['graphql-transport-ws', 'graphql-ws']) {
      const client = await RawClient.open(t.wsUrl, protocol, alice);
      expect(client.ws.protocol).toBe(protocol);
      client.close();
      await client.waitClosed();
    }
    await until(async () => (await t.connections()) === 0, 'connections to close');
  });

  it('prefers graphql-transport-ws when both are offered', async () => {
    const client = await RawClient.open(
      t.wsUrl,
      ['graphql-ws', 'graphql-transport-ws'] as never,
      alice,
    );
    expect(client.ws.protocol).toBe('graphql-transport-ws');
    client.close();
    await client.waitClosed();
  });

  it('refuses an upgrade without a known subprotocol with 400', async () => {
    const none = await upgradeAnswer(port, { cookie: cookieHeader(alice) });
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body).error).toBe('unsupported_subprotocol');
    const other = await upgradeAnswer(port, {
      cookie: cookieHeader(alice),
      'Sec-WebSocket-Protocol': 'mqtt, chat',
    });
    expect(other.status).toBe(400);
  });

  it('refuses an upgrade without a valid session with 401', async () => {
    const anonymous = await upgradeAnswer(port, {
      'Sec-WebSocket-Protocol': 'graphql-transport-ws',
    });
    expect(anonymous.status).toBe(401);
    const unknown = await upgradeAnswer(port, {
      'Sec-WebSocket-Protocol': 'graphql-transport-ws',
      cookie: 'svc_session=not-a-session',
    });
    expect(unknown.status).toBe(401);
    const client = new RawClient(t.wsUrl, 'graphql-transport-ws', null);
    await expect(client.opened).rejects.toMatchObject({ status: 401 });
  });

  it('refuses a connection over the per-user cap with 429 too_many_connections', async () => {
    const first = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    const second = await RawClient.open(t.wsUrl, 'graphql-ws', alice);
    const third = await upgradeAnswer(port, {
      cookie: cookieHeader(alice),
      'Sec-WebSocket-Protocol': 'graphql-transport-ws',
    });
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toEqual({ error: 'too_many_connections' });
    // Another user is not affected.
    const bob = await t.signUp();
    const bobs = await RawClient.open(t.wsUrl, 'graphql-transport-ws', bob);
    // Closing one frees its place.
    first.close();
    await first.waitClosed();
    await until(async () => (await t.connections()) === 2, 'the place to be freed');
    const again = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    for (const c of [second, bobs, again]) {
      c.close();
      await c.waitClosed();
    }
    await until(async () => (await t.connections()) === 0, 'connections to close');
  });

  it('checks the Origin as every route under /api does', async () => {
    const base = { cookie: cookieHeader(alice), 'Sec-WebSocket-Protocol': 'graphql-transport-ws' };
    const evil = await upgradeAnswer(port, { ...base, Origin: 'https://evil.example' });
    expect(evil.status).toBe(400);
    expect(JSON.parse(evil.body).error).toBe('origin_not_allowed');
    for (const origin of [
      `http://127.0.0.1:${port}`,
      'https://app.example',
      'svc-desktop://localhost',
    ]) {
      const ok = await upgradeAnswer(port, { ...base, Origin: origin });
      expect(ok.status, origin).toBe(101);
    }
    await until(async () => (await t.connections()) === 0, 'connections to close');
  });

  it('answers 403 blocked to an address on the deny list', async () => {
    await t.server.ctx.services.ipBlocks.block(CLI_ACTOR, { cidr: '127.0.0.1', reason: 'test' });
    try {
      await until(() => t.server.ctx.services.ipBlocks.isBlocked('127.0.0.1'), 'the block');
      const blocked = await upgradeAnswer(port, {
        cookie: cookieHeader(alice),
        'Sec-WebSocket-Protocol': 'graphql-transport-ws',
      });
      expect(blocked.status).toBe(403);
      expect(JSON.parse(blocked.body)).toEqual({ error: 'blocked' });
    } finally {
      await t.server.ctx.services.ipBlocks.unblock(CLI_ACTOR, '127.0.0.1');
      await until(() => !t.server.ctx.services.ipBlocks.isBlocked('127.0.0.1'), 'the unblock');
    }
  });

  it('answers 404 for an upgrade elsewhere', async () => {
    const other = await upgradeAnswer(
      port,
      { cookie: cookieHeader(alice), 'Sec-WebSocket-Protocol': 'graphql-transport-ws' },
      '/api/other',
    );
    expect(other.status).toBe(404);
  });
});

describe('the upgrade and the rest of the server', () => {
  it('counts upgrades against the per-address request limit', async () => {
    const t = await startRealtime({ env: { SVC_RATE_REQUESTS_PER_MIN_PER_IP: '5' } });
    try {
      const alice = await t.signUp();
      const headers = {
        cookie: cookieHeader(alice),
        'Sec-WebSocket-Protocol': 'graphql-transport-ws',
      };
      let refused: Awaited<ReturnType<typeof upgradeAnswer>> | null = null;
      for (let i = 0; i < 10 && !refused; i += 1) {
        const answer = await upgradeAnswer(t.server.address.port, headers);
        if (answer.status !== 101) refused = answer;
      }
      expect(refused?.status).toBe(429);
      expect(JSON.parse(refused!.body)).toMatchObject({ error: 'rate_limited' });
      expect(refused!.headers).toMatch(/Retry-After: \d+/);
    } finally {
      await t.stop();
    }
  });

  it('closes every connection with 1001 going away when the server stops', async () => {
    const t = await startRealtime();
    const alice = await t.signUp();
    const modern = await RawClient.open(t.wsUrl, 'graphql-transport-ws', alice);
    const legacy = await RawClient.open(t.wsUrl, 'graphql-ws', alice);
    await t.stop();
    expect(await modern.waitClosed()).toEqual({ code: 1001, reason: 'going away' });
    expect(await legacy.waitClosed()).toEqual({ code: 1001, reason: 'going away' });
  });
});
