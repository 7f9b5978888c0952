import { afterEach, describe, expect, it } from 'vitest';

import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { conversationOf, createConversation, expectCode } from './_helpers.js';

// The daily DM request limit is the stricter of an instance cap (one more answers VALIDATION,
// as every cap does) and the relay quota (one more answers RATE_LIMITED with the wait).
describe('DM requests past the daily limit', () => {
  const clock = new ManualClock(Date.parse('2030-03-01T00:00:00Z'));
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  async function sendUntilRefused(app: TestApp, allowed: number) {
    const sender = await signUpAndIn(app, { username: 'sender' });
    const targets = await Promise.all(
      Array.from({ length: allowed + 1 }, (_, i) => signUpAndIn(app, { username: `target${i}` })),
    );
    for (const target of targets.slice(0, allowed)) {
      await conversationOf(app, sender, [target]);
      clock.advance(HOUR_MS);
    }
    return createConversation(app, sender, [targets[allowed]!.id]);
  }

  it('answers VALIDATION naming the cap when SVC_LIMIT_DM_REQUESTS_PER_DAY is the stricter', async () => {
    t = await createTestApp({
      clock,
      env: { SVC_LIMIT_DM_REQUESTS_PER_DAY: '2', SVC_RELAY_DM_REQUESTS_PER_DAY: '5' },
    });
    const err = expectCode(await sendUntilRefused(t, 2), 'VALIDATION');
    expect(err.message).toContain('SVC_LIMIT_DM_REQUESTS_PER_DAY');
    expect(err.extensions).toMatchObject({ limit: 2 });
    expect(err.extensions!.retryAfterSeconds).toBeUndefined();
    // The SDL says so too: the description of createConversation is what clients read.
    const sdl = (await t.inject({ method: 'GET', url: '/api/sdl' })).body;
    const field = sdl.indexOf('  createConversation(');
    const closing = sdl.lastIndexOf('"'.repeat(3), field);
    const about = sdl.slice(sdl.lastIndexOf('"'.repeat(3), closing - 1), field);
    expect(about).toMatch(
      /VALIDATION naming SVC_LIMIT_DM_REQUESTS_PER_DAY\s+when\s+the operator's cap binds/,
    );
    expect(about).toMatch(/RATE_LIMITED with retryAfterSeconds when the relay quota does/);
  });

  it('answers RATE_LIMITED with retryAfterSeconds when the relay quota is the stricter', async () => {
    t = await createTestApp({
      clock,
      env: { SVC_LIMIT_DM_REQUESTS_PER_DAY: '9', SVC_RELAY_DM_REQUESTS_PER_DAY: '2' },
    });
    const err = expectCode(await sendUntilRefused(t, 2), 'RATE_LIMITED');
    expect(err.message).toContain('SVC_RELAY_DM_REQUESTS_PER_DAY');
    // Requests went out an hour apart; the older one is a day old 22 hours from now.
    expect(err.extensions!.retryAfterSeconds).toBe(22 * 3600);
  });

  it('answers RATE_LIMITED past the default relay quota of 20 when no cap is set', async () => {
    t = await createTestApp({ clock });
    const err = expectCode(await sendUntilRefused(t, 20), 'RATE_LIMITED');
    expect(err.extensions!.retryAfterSeconds).toBeGreaterThan(0);
  });
});
