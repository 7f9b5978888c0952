import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOUR_MS, ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { namedStatements } from '../../src/db/statements/prepared.js';
import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';
import { BACKGROUND, recordQueries } from '../conversations/_helpers.js';

import { challenge, loginWithKey, signUpWithKey } from './_keys.js';

// What a key sign-in costs the database: a sign-in storm (every client of a restarted server
// signing in again) is this times the number of people.
describe(`the cost of a key sign-in (${TEST_DB})`, () => {
  const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_OPEN_REGISTRATION: 'true' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const sweeps = (statements: string[]) =>
    statements.filter((s) => /^delete from "key_challenge"/.test(s)).length;
  const challengeRows = async () =>
    (await t.ctx.db.kysely.selectFrom('key_challenge').select('id').execute()).length;

  it('spends the challenge and reads its nonce in one statement, and the device with its account in one', async () => {
    const account = await signUpWithKey(t);
    // A tick of the server's periodic work that falls inside the window is not the sign-in's.
    const statements = (
      await recordQueries(() => loginWithKey(t, account.device, account.username))
    ).filter((s) => !BACKGROUND.test(s));
    const challengeStatements = statements.filter((s) => s.includes('"key_challenge"'));
    // The challenge's insert, and its spending with `returning`: no read after the update.
    expect(challengeStatements.filter((s) => /^select/.test(s))).toEqual([]);
    const spends = challengeStatements.filter((s) => /^(with spent as \()?update/.test(s));
    expect(spends).toHaveLength(1);
    // The device and its account in one read (no read of the account alone); the session's
    // insert checks blocks and deletion itself. On PostgreSQL that read is in the spending's
    // statement.
    const reads = statements.filter((s) =>
      /^(with spent as \(.*\) )?select .* from "(device|account)"|left join \(select .* from "device"/.test(
        s,
      ),
    );
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatch(/from "device" as "d" inner join "account" as "a"/);
    if (TEST_DB === 'postgres') expect(reads[0]).toBe(spends[0]);
    expect(statements.filter((s) => /principal_block/.test(s))).toHaveLength(1);
    // The session and the device's last use commit together, once: on PostgreSQL in one
    // statement (`writeThen`, no BEGIN or COMMIT), on SQLite in one transaction (one disk flush).
    const starts = statements.filter((s) => /^(with written as \()?insert into "session"/.test(s));
    expect(starts).toHaveLength(1);
    if (TEST_DB === 'postgres') {
      expect(starts[0]).toContain('update "device"');
      expect(statements.filter((s) => /^(begin|commit)$/i.test(s.trim()))).toEqual([]);
      // The challenge; its spending with the device and its account; the session with the last
      // use.
      expect(statements, statements.join('\n')).toHaveLength(3);
    } else {
      expect(statements.filter((s) => /^commit/.test(s))).toHaveLength(1);
      expect(statements.length).toBeLessThanOrEqual(8);
    }
  });

  it.runIf(TEST_DB === 'postgres')(
    'runs every statement of a key sign-in as a named statement, planned once',
    async () => {
      const account = await signUpWithKey(t);
      const statements = await recordQueries(() =>
        loginWithKey(t, account.device, account.username),
      );
      const work = statements.filter((s) => !/^(begin|commit)$/.test(s));
      expect(work.filter((s) => !namedStatements.has(s))).toEqual([]);
    },
  );

  it('records the device’s last use with the session it starts', async () => {
    const account = await signUpWithKey(t);
    clock.advance(MINUTE_MS);
    const agent = await loginWithKey(t, account.device, account.username);
    const devices = (await t.gql('{ myDevices { lastUsedAt current } }', {}, agent)).body.data
      ?.myDevices as Array<{ lastUsedAt: string | null; current: boolean }>;
    expect(devices.find((d) => d.current)?.lastUsedAt).toBe(clock.now().toISOString());
  });

  it('sweeps spent and expired challenges at most once a minute', async () => {
    const before = await recordQueries(async () => {
      await challenge(t);
    });
    clock.advance(MINUTE_MS);
    // A minute later: one sweep, then none for the challenges after it.
    const swept = await recordQueries(async () => {
      for (let i = 0; i < 5; i++) await challenge(t);
    });
    expect(sweeps(swept)).toBe(1);
    const next = await recordQueries(async () => {
      clock.advance(MINUTE_MS - 1);
      await challenge(t);
    });
    expect(sweeps(next)).toBe(0);
    expect(sweeps(before) + sweeps(swept) + sweeps(next)).toBeLessThanOrEqual(2);

    // Over an hour on, the sweep deletes everything issued before (spent or not).
    const rows = await challengeRows();
    expect(rows).toBeGreaterThanOrEqual(7);
    clock.advance(2 * HOUR_MS);
    await challenge(t);
    expect(await challengeRows()).toBe(1);
  });
});
