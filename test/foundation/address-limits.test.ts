import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR } from '../../src/auth/actor.js';
import { DAY_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';

const QUERY = JSON.stringify({ query: '{ serverInfo { apiVersion } }' });

function api(t: TestApp, remoteAddress: string, headers: Record<string, string> = {}) {
  return t.inject({
    method: 'POST',
    url: '/api',
    remoteAddress,
    headers: { 'content-type': 'application/json', ...headers },
    payload: QUERY,
  });
}

async function statuses(t: TestApp, n: number, remoteAddress: string, headers = {}) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await api(t, remoteAddress, headers)).statusCode);
  return out;
}

describe('per-address request limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { SVC_RATE_REQUESTS_PER_MIN_PER_IP: '3', SVC_RATE_EXEMPT_ADDRESSES: '10.9.0.0/16, ::1' },
    });
  });
  afterAll(async () => t?.close());

  it('allows a burst of the per-minute number, then answers 429 with Retry-After', async () => {
    expect(await statuses(t, 3, '198.51.100.7')).toEqual([200, 200, 200]);
    const refused = await api(t, '198.51.100.7');
    expect(refused.statusCode).toBe(429);
    // One token comes back every 60/3 = 20 seconds.
    expect(refused.headers['retry-after']).toBe('20');
    expect(refused.json()).toStrictEqual({ error: 'rate_limited', retryAfterSeconds: 20 });
    // Another address has a bucket of its own.
    expect((await api(t, '198.51.100.8')).statusCode).toBe(200);
  });

  it('counts every route under /api, and only those', async () => {
    expect(await statuses(t, 3, '198.51.100.20')).toEqual([200, 200, 200]);
    const sdl = await t.inject({ method: 'GET', url: '/api/sdl', remoteAddress: '198.51.100.20' });
    expect(sdl.statusCode).toBe(429);
    for (const url of ['/healthz', '/readyz', '/.well-known/svc-server', '/s2s/v1/anything']) {
      const res = await t.inject({ method: 'GET', url, remoteAddress: '198.51.100.20' });
      expect(res.statusCode, url).not.toBe(429);
    }
  });

  it('counts IPv6 clients per /64', async () => {
    expect(await statuses(t, 3, '2001:db8:1:2::1')).toEqual([200, 200, 200]);
    expect((await api(t, '2001:db8:1:2:ffff:ffff:ffff:ffff')).statusCode).toBe(429);
    expect((await api(t, '2001:db8:1:3::1')).statusCode).toBe(200);
    // An IPv4-mapped peer is the IPv4 client.
    expect(await statuses(t, 3, '::ffff:198.51.100.30')).toEqual([200, 200, 200]);
    expect((await api(t, '198.51.100.30')).statusCode).toBe(429);
  });

  it('does not count SVC_RATE_EXEMPT_ADDRESSES', async () => {
    expect(await statuses(t, 6, '10.9.1.2')).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses(t, 6, '::1')).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await statuses(t, 4, '10.10.0.1')).toEqual([200, 200, 200, 429]);
  });

  it('ignores forwarded headers unless they are trusted', async () => {
    const out: number[] = [];
    for (let i = 0; i < 4; i++) {
      out.push((await api(t, '198.51.100.40', { 'x-forwarded-for': `203.0.113.${i}` })).statusCode);
    }
    expect(out).toEqual([200, 200, 200, 429]);
  });
});

describe('client address behind a trusted proxy', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
  beforeAll(async () => {
    t = await createTestApp({
      clock,
      env: { SVC_RATE_REQUESTS_PER_MIN_PER_IP: '2', SVC_TRUST_FORWARDED_HEADERS: 'true' },
    });
  });
  afterAll(async () => t?.close());

  const proxy = '127.0.0.1';

  it('reads the last X-Forwarded-For entry (the one the proxy wrote)', async () => {
    expect(await statuses(t, 2, proxy, { 'x-forwarded-for': '203.0.113.9' })).toEqual([200, 200]);
    // A client that prepends a forged entry is still counted as itself.
    expect((await api(t, proxy, { 'x-forwarded-for': '1.1.1.1, 203.0.113.9' })).statusCode).toBe(
      429,
    );
    expect((await api(t, proxy, { 'x-forwarded-for': '203.0.113.10' })).statusCode).toBe(200);
  });

  it('reads Forwarded for= (and prefers it over X-Forwarded-For)', async () => {
    const headers = {
      forwarded: 'for="[2001:db8:9::1]:4711";proto=https',
      'x-forwarded-for': '203.0.113.50',
    };
    expect(await statuses(t, 2, proxy, headers)).toEqual([200, 200]);
    expect((await api(t, proxy, { forwarded: 'for="[2001:db8:9::2]"' })).statusCode).toBe(429);
    expect((await api(t, proxy, { 'x-forwarded-for': '203.0.113.50' })).statusCode).toBe(200);
  });

  it('blocks the address a trusted proxy names', async () => {
    await t.ctx.services.ipBlocks.block(CLI_ACTOR, { cidr: '203.0.113.77' });
    const res = await api(t, proxy, { 'x-forwarded-for': '203.0.113.77' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toStrictEqual({ error: 'blocked' });
    expect((await api(t, proxy, { 'x-forwarded-for': '203.0.113.78' })).statusCode).toBe(200);
  });
});

describe('IP deny list', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  const routes = [
    ['POST', '/api'],
    ['GET', '/api/sdl'],
    ['GET', '/readyz'],
    ['GET', '/.well-known/svc-server'],
    ['GET', '/s2s/v1/anything'],
    ['GET', '/no/such/route'],
  ] as const;

  it('answers 403 {"error":"blocked"} on every route but /healthz', async () => {
    await t.ctx.services.ipBlocks.block(CLI_ACTOR, { cidr: '198.51.100.0/24' });
    for (const [method, url] of routes) {
      const res = await t.inject({ method, url, remoteAddress: '198.51.100.200' });
      expect(res.statusCode, url).toBe(403);
      expect(res.json(), url).toStrictEqual({ error: 'blocked' });
    }
    const health = await t.inject({
      method: 'GET',
      url: '/healthz',
      remoteAddress: '198.51.100.200',
    });
    expect(health.statusCode).toBe(200);
    expect((await api(t, '198.51.101.1')).statusCode).toBe(200);
  });

  it('blocks IPv6 ranges, and IPv4-mapped peers by their IPv4 address', async () => {
    await t.ctx.services.ipBlocks.block(CLI_ACTOR, { cidr: '2001:db8:5::/48' });
    expect((await api(t, '2001:db8:5:ffff::1')).statusCode).toBe(403);
    expect((await api(t, '2001:db8:6::1')).statusCode).toBe(200);
    expect((await api(t, '::ffff:198.51.100.9')).statusCode).toBe(403);
  });

  it('stops blocking the moment a block expires', async () => {
    await t.ctx.services.ipBlocks.block(CLI_ACTOR, { cidr: '192.0.2.0/24', expiresInDays: 1 });
    expect((await api(t, '192.0.2.5')).statusCode).toBe(403);
    clock.advance(DAY_MS - 1);
    expect((await api(t, '192.0.2.5')).statusCode).toBe(403);
    clock.advance(1);
    expect((await api(t, '192.0.2.5')).statusCode).toBe(200);
  });

  it('lifts a block on unblock', async () => {
    await t.ctx.services.ipBlocks.unblock(CLI_ACTOR, '2001:db8:5::/48');
    expect((await api(t, '2001:db8:5:ffff::1')).statusCode).toBe(200);
  });
});
