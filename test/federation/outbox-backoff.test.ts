import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { insertOutboxCall } from '../../src/federation/queries.js';
import {
  FIRST_BACKOFF_MS,
  GIVE_UP_AFTER_MS,
  MAX_BACKOFF_MS,
} from '../../src/federation/s2s-outbox.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';

import { freePort } from './_fed.js';

// The s2s outbox's retries against a peer nobody answers for: exponential backoff, capped, and
// dropped after a week with an error line. The clock is the test's; the drain runs on demand.
describe('s2s outbox backoff', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  let peer: string;

  beforeAll(async () => {
    peer = `127.0.0.1:${await freePort()}`;
    t = await createTestApp({
      clock,
      env: {
        SVC_PUBLIC_BASE_URL: 'http://127.0.0.1:9',
        SVC_S2S_INSECURE: 'true',
        SVC_S2S_TIMEOUT_MS: '1000',
      },
    });
  });
  afterAll(async () => t?.close());

  const rows = () => t.ctx.db.kysely.selectFrom('s2s_outbox').selectAll().execute();
  const drain = () => t.ctx.federation.outbox!.drain();

  it('retries after 5 s, then twice as long each time, up to an hour', async () => {
    const now = clock.now().getTime();
    await insertOutboxCall(t.ctx.db.kysely, {
      id: '0190f0f0-0000-7000-8000-000000000001',
      serverId: peer,
      path: 'revocations',
      body: '{}',
      nextAttemptAt: now,
      createdAt: now,
    });
    expect(await drain()).toBe(0);
    let [row] = await rows();
    expect(row).toMatchObject({ attempts: 1, nextAttemptAt: now + FIRST_BACKOFF_MS });
    expect(row!.lastError).toMatch(/unreachable/);

    // Not due yet: nothing is sent.
    await drain();
    expect((await rows())[0]!.attempts).toBe(1);

    let wait = FIRST_BACKOFF_MS;
    for (let attempt = 2; attempt <= 12; attempt++) {
      clock.advance(wait);
      await drain();
      [row] = await rows();
      wait = Math.min(wait * 2, MAX_BACKOFF_MS);
      expect(row).toMatchObject({ attempts: attempt, nextAttemptAt: clock.now().getTime() + wait });
    }
    expect(wait).toBe(MAX_BACKOFF_MS);
  });

  it('drops a call nobody accepted for a week, saying so in the log', async () => {
    clock.advance(GIVE_UP_AFTER_MS);
    await drain();
    expect(await rows()).toEqual([]);
    expect(t.logs.find('s2s call dropped after a week')).toMatchObject({ peer });
  });
});
