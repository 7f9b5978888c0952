import { createHash } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { createTestApp, setCookies, type TestApp } from '../_util/app.js';
import { expectCode, ok } from '../accounts/_helpers.js';

import {
  challenge,
  LOGIN_WITH_KEY,
  loginProof,
  loginWithKey,
  newKey,
  nowIso,
  SIGNUP_WITH_KEY,
  signText,
  signUpWithKey,
  signupInput,
  statement,
} from './_keys.js';

describe('key login and key signup', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_OPEN_REGISTRATION: 'true' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('issues a two-minute challenge naming the server key of the discovery document', async () => {
    const ch = await challenge(t);
    expect(ch.nonce.length).toBeGreaterThanOrEqual(32);
    expect(Date.parse(ch.expiresAt)).toBe(clock.now().getTime() + 2 * MINUTE_MS);
    const discovery = (await t.inject({ method: 'GET', url: '/.well-known/svc-server' })).json();
    expect(JSON.parse(discovery.descriptor.payload).key).toBe(ch.serverKey);
    const other = await challenge(t);
    expect(other.nonce).not.toBe(ch.nonce);
  });

  it('signs a key account up: no password, its identity id, one device bound to the session', async () => {
    const acc = await signUpWithKey(t);
    const data = ok(
      await t.gql(
        '{ me { id username } myKeyIdentity { id publicKey } myDevices { id name publicKey current encryptionReady } }',
        {},
        acc.agent,
      ),
    );
    expect(data.me.username).toBe(acc.username);
    const kid = `kid_${createHash('sha256')
      .update(Buffer.from(acc.identity.publicKey, 'base64url'))
      .digest('base64url')
      .slice(0, 22)}`;
    expect(data.myKeyIdentity).toEqual({ id: kid, publicKey: acc.identity.publicKey });
    expect(data.myDevices).toHaveLength(1);
    expect(data.myDevices[0]).toMatchObject({
      name: 'Laptop',
      publicKey: acc.device.publicKey,
      current: true,
      encryptionReady: false,
    });
    const row = await t.ctx.db.kysely
      .selectFrom('account')
      .select(['passwordHash', 'keyIdentityId'])
      .where('id', '=', acc.agent.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ passwordHash: null, keyIdentityId: kid });
    // A key account has no password to sign in with.
    expectCode(
      await t.gql(
        'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }',
        { u: acc.username, p: 'correct horse battery staple' },
      ),
      'UNAUTHENTICATED',
    );
  });

  it('logs a device in with a signed statement and binds the session to it', async () => {
    const acc = await signUpWithKey(t);
    const agent = await loginWithKey(t, acc.device, acc.username);
    const data = ok(await t.gql('{ me { id } myDevices { id current } }', {}, agent));
    expect(data.me.id).toBe(acc.agent.id);
    expect(data.myDevices[0].current).toBe(true);
    const session = await t.ctx.db.kysely
      .selectFrom('session')
      .select('deviceId')
      .where('accountId', '=', acc.agent.id)
      .orderBy('createdAt', 'desc')
      .executeTakeFirstOrThrow();
    expect(session.deviceId).toBe(data.myDevices[0].id);
    // By device id too.
    const proof = await loginProof(t, acc.device);
    const byId = await t.gql(LOGIN_WITH_KEY, {
      proof: { ...proof, devicePublicKey: null, deviceId: data.myDevices[0].id },
    });
    expect(ok(byId).loginWithKey.user.id).toBe(acc.agent.id);
  });

  it('sets both cookies on key login and key signup, with csrfToken equal to svc_csrf', async () => {
    const signup = await signupInput(t);
    const acc = await t.gql(SIGNUP_WITH_KEY, { input: signup.input });
    const login = await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, signup.device) });
    for (const [res, field] of [
      [acc, 'signupWithKey'],
      [login, 'loginWithKey'],
    ] as const) {
      const c = setCookies(res.response);
      const attrs = { sameSite: 'Lax', path: '/', maxAge: 30 * 86400 };
      expect(c.svc_session).toMatchObject({ ...attrs, httpOnly: true });
      expect(c.svc_csrf).toMatchObject(attrs);
      expect(c.svc_csrf!.httpOnly).toBeFalsy();
      expect(c.svc_csrf!.value).toBe(ok(res)[field].csrfToken);
    }
  });

  it('refuses a replayed challenge', async () => {
    const acc = await signUpWithKey(t);
    const proof = await loginProof(t, acc.device);
    ok(await t.gql(LOGIN_WITH_KEY, { proof }));
    expectCode(await t.gql(LOGIN_WITH_KEY, { proof }), 'UNAUTHENTICATED');
  });

  it('spends a challenge on a failed attempt', async () => {
    const acc = await signUpWithKey(t);
    const proof = await loginProof(t, acc.device);
    expectCode(
      await t.gql(LOGIN_WITH_KEY, { proof: { ...proof, signature: signText(newKey(), 'x') } }),
      'UNAUTHENTICATED',
    );
    expectCode(await t.gql(LOGIN_WITH_KEY, { proof }), 'UNAUTHENTICATED');
  });

  it('refuses an expired challenge', async () => {
    const acc = await signUpWithKey(t);
    const ch = await challenge(t);
    clock.advance(2 * MINUTE_MS + 1);
    const issuedAt = nowIso(t);
    const text = statement('login', ch, issuedAt, [['device', acc.device.publicKey]]);
    const res = await t.gql(LOGIN_WITH_KEY, {
      proof: {
        challengeId: ch.challengeId,
        devicePublicKey: acc.device.publicKey,
        issuedAt,
        signature: signText(acc.device, text),
      },
    });
    expectCode(res, 'UNAUTHENTICATED');
    expect(res.body.errors![0]!.message).toMatch(/expired/);
  });

  it('refuses an issued-at more than 5 minutes off, accepts one within', async () => {
    const acc = await signUpWithKey(t);
    const late = new Date(clock.now().getTime() - 6 * MINUTE_MS).toISOString();
    expectCode(
      await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, acc.device, { issuedAt: late }) }),
      'UNAUTHENTICATED',
    );
    const early = new Date(clock.now().getTime() + 6 * MINUTE_MS).toISOString();
    expectCode(
      await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, acc.device, { issuedAt: early }) }),
      'UNAUTHENTICATED',
    );
    const skewed = new Date(clock.now().getTime() - 4 * MINUTE_MS).toISOString();
    ok(
      await t.gql(LOGIN_WITH_KEY, {
        proof: await loginProof(t, acc.device, { issuedAt: skewed }),
      }),
    );
  });

  it('refuses signatures over the wrong statement or by another key', async () => {
    const acc = await signUpWithKey(t);
    const wrong: Array<(ch: Awaited<ReturnType<typeof challenge>>, at: string) => string> = [
      // another audience
      (ch, at) =>
        signText(acc.device, statement('signup', ch, at, [['device', acc.device.publicKey]])),
      // another nonce
      (ch, at) =>
        signText(
          acc.device,
          statement('login', { ...ch, nonce: 'x' + ch.nonce }, at, [
            ['device', acc.device.publicKey],
          ]),
        ),
      // another server
      (ch, at) =>
        signText(
          acc.device,
          statement('login', { ...ch, serverKey: newKey().publicKey }, at, [
            ['device', acc.device.publicKey],
          ]),
        ),
      // another issued-at than the one sent
      (ch) =>
        signText(
          acc.device,
          statement('login', ch, '2001-01-01T00:00:00.000Z', [['device', acc.device.publicKey]]),
        ),
      // a trailing newline
      (ch, at) =>
        signText(acc.device, statement('login', ch, at, [['device', acc.device.publicKey]]) + '\n'),
      // the right statement, another key
      (ch, at) =>
        signText(newKey(), statement('login', ch, at, [['device', acc.device.publicKey]])),
    ];
    for (const make of wrong) {
      const ch = await challenge(t);
      const issuedAt = nowIso(t);
      expectCode(
        await t.gql(LOGIN_WITH_KEY, {
          proof: {
            challengeId: ch.challengeId,
            devicePublicKey: acc.device.publicKey,
            issuedAt,
            signature: make(ch, issuedAt),
          },
        }),
        'UNAUTHENTICATED',
      );
    }
  });

  it('answers an unknown device like a wrong signature', async () => {
    const stranger = newKey();
    const res = await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, stranger) });
    expectCode(res, 'UNAUTHENTICATED');
    const ch = await challenge(t);
    expectCode(
      await t.gql(LOGIN_WITH_KEY, {
        proof: {
          challengeId: ch.challengeId,
          deviceId: '01900000-0000-7000-8000-000000000000',
          issuedAt: nowIso(t),
          signature: signText(stranger, 'x'),
        },
      }),
      'UNAUTHENTICATED',
    );
  });

  it('spends the challenge of an attempt by an unknown device, by key or by id', async () => {
    const stranger = newKey();
    const usedAt = async (id: string) =>
      (
        await t.ctx.db.kysely
          .selectFrom('key_challenge')
          .select('usedAt')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).usedAt;
    const byKey = await loginProof(t, stranger);
    expectCode(await t.gql(LOGIN_WITH_KEY, { proof: byKey }), 'UNAUTHENTICATED');
    expect(await usedAt(byKey.challengeId)).toBe(clock.now().getTime());
    const byId = await loginProof(t, stranger);
    const attempt = {
      ...byId,
      devicePublicKey: null,
      deviceId: '01900000-0000-7000-8000-000000000000',
    };
    expectCode(await t.gql(LOGIN_WITH_KEY, { proof: attempt }), 'UNAUTHENTICATED');
    expect(await usedAt(byId.challengeId)).toBe(clock.now().getTime());
  });

  it('answers VALIDATION for malformed keys, signatures, times and challenge ids', async () => {
    const acc = await signUpWithKey(t);
    const good = await loginProof(t, acc.device);
    const cases: Array<Record<string, unknown>> = [
      { devicePublicKey: acc.device.publicKey + '=' },
      { devicePublicKey: acc.device.publicKey.slice(0, 42) },
      { devicePublicKey: Buffer.alloc(33, 1).toString('base64url') },
      { devicePublicKey: 'not base64!' },
      { signature: good.signature.slice(0, 80) },
      { signature: Buffer.alloc(65, 1).toString('base64url') },
      { signature: '***' },
      { issuedAt: 'yesterday' },
      { issuedAt: '2030-01-01 00:00:00' },
      { challengeId: 'nope' },
      { devicePublicKey: null },
    ];
    for (const patch of cases) {
      const res = await t.gql(LOGIN_WITH_KEY, { proof: { ...good, ...patch } });
      expectCode(res, 'VALIDATION');
    }
  });

  it('refuses a signup whose signatures do not match the signup statement', async () => {
    const s = await signupInput(t);
    // The device signature made by the identity key.
    expectCode(
      await t.gql(SIGNUP_WITH_KEY, {
        input: { ...s.input, deviceSignature: s.input.identitySignature },
      }),
      'UNAUTHENTICATED',
    );
    // A statement naming another username.
    const s2 = await signupInput(t);
    const res = await t.gql(SIGNUP_WITH_KEY, {
      input: { ...s2.input, username: s2.username + 'x' },
    });
    expectCode(res, 'UNAUTHENTICATED');
    expect(
      await t.ctx.db.kysely
        .selectFrom('account')
        .select('id')
        .where('username', 'in', [s.username, s2.username, s2.username + 'x'])
        .execute(),
    ).toEqual([]);
  });

  it('refuses a key identity, device key or username in use with CONFLICT', async () => {
    const acc = await signUpWithKey(t);
    const sameIdentity = await signupInput(t, { identity: acc.identity });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: sameIdentity.input }), 'CONFLICT');
    const sameDevice = await signupInput(t, { device: acc.device });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: sameDevice.input }), 'CONFLICT');
    const sameName = await signupInput(t, { username: acc.username.toUpperCase() });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: sameName.input }), 'CONFLICT');
  });

  it('refuses the same key as identity and device, bad usernames and device names', async () => {
    const k = newKey();
    const same = await signupInput(t, { identity: k, device: k });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: same.input }), 'VALIDATION');
    const reserved = await signupInput(t, { username: 'deleted-12345678' });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: reserved.input }), 'VALIDATION');
    const badName = await signupInput(t, { extra: { deviceName: 'a\u0000b' } });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: badName.input }), 'VALIDATION');
    const longName = await signupInput(t, { extra: { deviceName: 'x'.repeat(65) } });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: longName.input }), 'VALIDATION');
  });
});

describe('key signup and the registration rules', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { SVC_TERMS_URL: 'https://example.org/terms' },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('needs an invite while registration is closed, and the terms', async () => {
    const noInvite = await signupInput(t, {
      extra: { acceptedTermsUrl: 'https://example.org/terms' },
    });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: noInvite.input }), 'VALIDATION');

    const { token } = await t.ctx.services.registration.createInstanceInvite(
      { kind: 'cli' },
      { email: 'keyed@example.org' },
    );
    const noTerms = await signupInput(t, { extra: { inviteToken: token } });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: noTerms.input }), 'VALIDATION');

    const good = await signupInput(t, {
      extra: { inviteToken: token, acceptedTermsUrl: 'https://example.org/terms' },
    });
    const data = ok(await t.gql(SIGNUP_WITH_KEY, { input: good.input }));
    // An invite bound to an address gives the account that address.
    expect(data.signupWithKey.user.email).toBe('keyed@example.org');
    const row = await t.ctx.db.kysely
      .selectFrom('account')
      .select(['acceptedTermsUrl', 'acceptedTermsAt'])
      .where('id', '=', data.signupWithKey.user.id)
      .executeTakeFirstOrThrow();
    expect(row.acceptedTermsUrl).toBe('https://example.org/terms');
    expect(row.acceptedTermsAt).not.toBeNull();

    const again = await signupInput(t, {
      extra: { inviteToken: token, acceptedTermsUrl: 'https://example.org/terms' },
    });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: again.input }), 'INVALID_TOKEN');
  });

  it('answers EMAIL_TAKEN for an invite bound to an address another account has', async () => {
    const { token } = await t.ctx.services.registration.createInstanceInvite(
      { kind: 'cli' },
      { email: 'taken@example.org' },
    );
    // Another account takes the address after the invite was made.
    await t.ctx.services.accounts.createPasswordAccount({
      username: 'holder',
      password: 'correct horse battery staple',
      email: 'Taken@Example.org',
    });
    const input = await signupInput(t, {
      extra: { inviteToken: token, acceptedTermsUrl: 'https://example.org/terms' },
    });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: input.input }), 'EMAIL_TAKEN');
    const row = await t.ctx.db.kysely
      .selectFrom('account')
      .select('id')
      .where('username', '=', input.username)
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });
});
