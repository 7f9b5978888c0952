import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signIn, signUpAndIn } from '../_util/seed.js';
import { expectCode, ok } from '../accounts/_helpers.js';

import { member, workspace } from './_fixtures.js';

const REQUEST = `mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }`;
const CANCEL = 'mutation { cancelAccountDeletion }';
const ME = '{ me { id deletionScheduledFor } }';

describe('requesting account deletion', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2030, 0, 1, 12));

  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => {
    await t.close();
  });

  it('schedules the purge after 14 days and ends every other session', async () => {
    const a = await signUpAndIn(t);
    const b = await signIn(t, a.username, DEFAULT_PASSWORD, a.id);
    const reasons: string[] = [];
    const off = t.ctx.services.sessions.onEnded((_ids, reason) => reasons.push(reason));
    let res;
    try {
      // Case and compatibility forms of the username match.
      res = await t.gql(REQUEST, { c: ` ${a.username.toUpperCase()} ` }, a);
    } finally {
      off();
    }
    const expected = new Date(clock.now().getTime() + 14 * DAY_MS).toISOString();
    expect(ok(res).requestAccountDeletion.scheduledFor).toBe(expected);
    expect(reasons).toEqual(['account_deletion_requested']);
    expect(ok(await t.gql(ME, {}, a)).me.deletionScheduledFor).toBe(expected);
    expectCode(await t.gql(ME, {}, b), 'UNAUTHENTICATED');
    // The account works as before: it can sign in again.
    const again = await signIn(t, a.username, DEFAULT_PASSWORD, a.id);
    expect(ok(await t.gql(ME, {}, again)).me.deletionScheduledFor).toBe(expected);
    // Nobody else sees the date.
    const other = await signUpAndIn(t);
    const row = await t.ctx.services.accounts.get(a.id);
    expect(row.deletionScheduledFor).toBe(Date.parse(expected));
    expect(ok(await t.gql(ME, {}, other)).me.deletionScheduledFor).toBeNull();
  });

  it('answers CONFLICT while a request is pending, and cancels', async () => {
    const a = await signUpAndIn(t);
    ok(await t.gql(REQUEST, { c: a.username }, a));
    expectCode(await t.gql(REQUEST, { c: a.username }, a), 'CONFLICT');
    expect(ok(await t.gql(CANCEL, {}, a)).cancelAccountDeletion).toBe(true);
    expect(ok(await t.gql(ME, {}, a)).me.deletionScheduledFor).toBeNull();
    expect(ok(await t.gql(CANCEL, {}, a)).cancelAccountDeletion).toBe(false);
    // After a cancel a new request works.
    ok(await t.gql(REQUEST, { c: a.username }, a));
  });

  it('answers VALIDATION for another username', async () => {
    const a = await signUpAndIn(t);
    const other = await signUpAndIn(t);
    for (const c of [other.username, '', a.username + 'x']) {
      expectCode(await t.gql(REQUEST, { c }, a), 'VALIDATION');
    }
    expect(ok(await t.gql(ME, {}, a)).me.deletionScheduledFor).toBeNull();
  });

  it('answers VALIDATION for the owner of a workspace with other members, not a sole owner', async () => {
    const owner = await signUpAndIn(t);
    const ws = await workspace(t, owner.id, 'Team Rocket');
    await workspace(t, owner.id, 'Solo');
    const other = await signUpAndIn(t);
    await member(t, ws, other.id);
    const res = await t.gql(REQUEST, { c: owner.username }, owner);
    expectCode(res, 'VALIDATION');
    expect(res.body.errors![0]!.message).toMatch(/Team Rocket/);
    expect(res.body.errors![0]!.message).not.toMatch(/Solo/);
    // A member (not owner) of that workspace may leave by deleting the account.
    ok(await t.gql(REQUEST, { c: other.username }, other));
    await t.ctx.db.kysely
      .deleteFrom('workspace_member')
      .where('workspaceId', '=', ws)
      .where('accountId', '=', other.id)
      .execute();
    ok(await t.gql(REQUEST, { c: owner.username }, owner));
  });

  it('answers FORBIDDEN for a person from another server', async () => {
    const a = await signUpAndIn(t);
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ homeServer: 'https://elsewhere.example' })
      .where('id', '=', a.id)
      .execute();
    expectCode(await t.gql(REQUEST, { c: a.username }, a), 'FORBIDDEN');
    expectCode(await t.gql(CANCEL, {}, a), 'FORBIDDEN');
  });

  it('needs a session and the CSRF header', async () => {
    const anonymous = await t.gql(REQUEST, { c: 'x' });
    expect(anonymous.body.errors?.[0]?.message).toMatch(/csrf/);
    const a = await signUpAndIn(t);
    const res = await t.gql(REQUEST, { c: a.username }, { ...a, csrfToken: '' });
    expect(res.body.errors?.[0]?.message).toMatch(/csrf/);
    expect(ok(await t.gql(ME, {}, a)).me.deletionScheduledFor).toBeNull();
  });
});

describe('SVC_ACCOUNT_DELETION_GRACE_DAYS', () => {
  it('sets the grace period', async () => {
    const clock = new ManualClock(Date.UTC(2030, 5, 1));
    const t = await createTestApp({ clock, env: { SVC_ACCOUNT_DELETION_GRACE_DAYS: '3' } });
    try {
      const a = await signUpAndIn(t);
      const res = ok(await t.gql(REQUEST, { c: a.username }, a));
      expect(res.requestAccountDeletion.scheduledFor).toBe(
        new Date(Date.UTC(2030, 5, 4)).toISOString(),
      );
    } finally {
      await t.close();
    }
  });
});
