import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { expectCode, ok } from '../accounts/_helpers.js';
import { cli } from '../cli/cli-io.js';

import { accountRow } from './_fixtures.js';

const REQUEST = `mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }`;

describe('svc account purge', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('purges due accounts; --now also those still in their grace period', async () => {
    const due = await signUpAndIn(t);
    const waiting = await signUpAndIn(t);
    ok(await t.gql(REQUEST, { c: due.username }, due));
    ok(await t.gql(REQUEST, { c: waiting.username }, waiting));
    // The CLI runs on the real clock: move the first request's date into the past.
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ deletionScheduledFor: Date.now() - DAY_MS })
      .where('id', '=', due.id)
      .execute();

    const run = await cli(['account', 'purge'], t.database.env);
    expect(run.code, run.err).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ purged: 1, accountIds: [due.id] });
    expect((await accountRow(t, due.id)).deletedAt).not.toBeNull();
    expect((await accountRow(t, waiting.id)).deletedAt).toBeNull();
    // The server's session lookup sees the purge at once.
    expectCode(await t.gql('{ me { id } }', {}, due), 'UNAUTHENTICATED');

    const again = await cli(['account', 'purge'], t.database.env);
    expect(JSON.parse(again.out)).toEqual({ purged: 0, accountIds: [] });

    const now = await cli(['account', 'purge', '--now'], t.database.env);
    expect(now.code, now.err).toBe(0);
    expect(JSON.parse(now.out)).toEqual({ purged: 1, accountIds: [waiting.id] });
    // Both ids start alike (made within a minute), so the second tombstone takes a longer prefix.
    const names = [
      (await accountRow(t, due.id)).username,
      (await accountRow(t, waiting.id)).username,
    ];
    expect(names[0]).toBe(`deleted-${due.id.slice(0, 8)}`);
    expect(names[1]).toMatch(/^deleted-/);
    expect(waiting.id.startsWith(names[1]!.slice('deleted-'.length))).toBe(true);
    expect(names[1]).not.toBe(names[0]);
  });
});
