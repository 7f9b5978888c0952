import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { keyIdentityId } from '../../src/auth/device-keys.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  LOGIN_WITH_KEY,
  loginProof,
  newKey,
  SIGNUP_WITH_KEY,
  signupInput,
  signUpWithKey,
} from '../devices/_keys.js';

import { codeOf } from './_helpers.js';

const BLOCK = `mutation($p: String!) { instanceBlockPrincipal(principalId: $p) {
  block { principalId username } sessionsEnded } }`;

describe('principal blocks and device-key sign-in', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_OPEN_REGISTRATION: 'true' } });
  });
  afterAll(async () => t?.close());

  it('refuses key login and signup with a blocked key identity', async () => {
    const op = await signUpAndIn(t, { operator: true });
    const account = await signUpWithKey(t);
    const kid = keyIdentityId(account.identity.publicKey);
    const res = await t.gql(BLOCK, { p: `key:${kid}` }, op);
    expect(res.body.data?.instanceBlockPrincipal).toEqual({
      block: { principalId: `key:${kid}`, username: account.username },
      sessionsEnded: 1,
    });
    expect(codeOf(await t.gql('{ me { id } }', {}, account.agent))).toBe('UNAUTHENTICATED');

    const traces = () =>
      Promise.all([
        t.ctx.db.kysely
          .selectFrom('device')
          .select('lastUsedAt')
          .where('accountId', '=', account.agent.id)
          .execute(),
        t.ctx.db.kysely
          .selectFrom('session')
          .select('id')
          .where('accountId', '=', account.agent.id)
          .execute(),
      ]);
    const before = await traces();
    const login = await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, account.device) });
    expect(codeOf(login)).toBe('FORBIDDEN');
    // Refused with its session: no session row, and the device's last use is not recorded.
    expect(await traces()).toEqual(before);

    // The same identity key signing up again under another name (and a fresh device) is refused,
    // and nothing of the attempt stays.
    const again = await signupInput(t, { identity: account.identity, device: newKey() });
    const signup = await t.gql(SIGNUP_WITH_KEY, { input: again.input });
    expect(['FORBIDDEN', 'VALIDATION', 'CONFLICT']).toContain(codeOf(signup));
    const rows = await t.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('keyIdentityId', '=', kid)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('refuses a signup whose new key identity is already blocked', async () => {
    const op = await signUpAndIn(t, { operator: true });
    const identity = newKey();
    const kid = keyIdentityId(identity.publicKey);
    // Blocked before it ever reached this server.
    expect((await t.gql(BLOCK, { p: `key:${kid}` }, op)).body.errors).toBeUndefined();
    const s = await signupInput(t, { identity });
    const signup = await t.gql(SIGNUP_WITH_KEY, { input: s.input });
    expect(codeOf(signup)).toBe('FORBIDDEN');
    expect(signup.response.cookies).toHaveLength(0);
    const rows = await t.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('usernameKey', '=', s.username.toLowerCase())
      .execute();
    expect(rows).toHaveLength(0);
  });
});
