import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/lib/clock.js';
import { readVersion } from '../../src/version.js';
import { createTestApp, type TestApp } from '../_util/app.js';

const version = readVersion();

describe('probes', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2030-01-01T00:00:00Z'));
  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  it('/healthz answers exactly {"status":"ok","version"} with no-store', async () => {
    const res = await t.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toBe(JSON.stringify({ status: 'ok', version }));
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('/readyz answers every check with no-store', async () => {
    const res = await t.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toStrictEqual({
      status: 'ok',
      version,
      checks: {
        database: { status: 'ok' },
        migrations: { status: 'ok' },
        serverKey: { status: 'ok' },
        frankingKey: { status: 'ok' },
      },
    });
  });

  it('reuses a result for one second, then checks again', async () => {
    clock.advance(5_000);
    expect((await t.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const franking = await t.ctx.db.kysely
      .selectFrom('server_key')
      .selectAll()
      .where('kind', '=', 'franking')
      .executeTakeFirstOrThrow();
    await t.ctx.db.kysely.deleteFrom('server_key').where('kind', '=', 'franking').execute();
    try {
      // Within the second: the earlier result, although the key is gone.
      clock.advance(999);
      const reused = await t.inject({ method: 'GET', url: '/readyz' });
      expect(reused.statusCode).toBe(200);
      // Past it: checked again, and the missing key fails readiness.
      clock.advance(1);
      const fresh = await t.inject({ method: 'GET', url: '/readyz' });
      expect(fresh.statusCode).toBe(503);
      expect(fresh.headers['cache-control']).toBe('no-store');
      const body = fresh.json();
      expect(body.status).toBe('fail');
      expect(body.version).toBe(version);
      expect(body.checks.frankingKey.status).toBe('fail');
      expect(body.checks.frankingKey.reason).toMatch(/franking key/);
      expect(body.checks.serverKey).toEqual({ status: 'ok' });
      expect(body.checks.database).toEqual({ status: 'ok' });
    } finally {
      await t.ctx.db.kysely.insertInto('server_key').values(franking).execute();
    }
    clock.advance(1_000);
    expect((await t.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('is outside the origin check', async () => {
    for (const url of ['/healthz', '/readyz']) {
      const res = await t.inject({
        method: 'GET',
        url,
        headers: { origin: 'https://elsewhere.example' },
      });
      expect(res.statusCode).toBe(200);
    }
  });
});
