import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { solvePow } from '../../web/src/auth/pow-math.js';
import { newKeyPair, publicKeyOf, sign, statement } from '../../web/src/auth/statement.js';
import { createTestApp, type TestApp } from '../_util/app.js';

// The web client's key statements and proof of work, checked against the real server: what the
// browser signs and solves is what the server accepts (the browser tests cover the rest).

const CHALLENGE = 'mutation { keyLoginChallenge { challengeId nonce serverKey } }';
const REG = 'query { registrationChallenge { challengeId salt bits } }';

describe('web client keys and proof of work', () => {
  let t: TestApp;
  let device: CryptoKeyPair;
  let devicePublicKey = '';
  beforeAll(async () => {
    t = await createTestApp({
      env: { SVC_OPEN_REGISTRATION: 'true', SVC_REGISTRATION_POW_BITS: '8' },
    });
  });
  afterAll(async () => t?.close());

  it('signs up with a key and a solved proof of work, then signs in with the device key', async () => {
    const identity = await newKeyPair(true);
    device = await newKeyPair(false);
    const identityPublicKey = await publicKeyOf(identity);
    devicePublicKey = await publicKeyOf(device);
    expect(identityPublicKey).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const reg = (await t.gql(REG)).body.data!.registrationChallenge;
    const nonce = solvePow(reg.salt, reg.bits);
    const c = (await t.gql(CHALLENGE)).body.data!.keyLoginChallenge;
    const issuedAt = new Date().toISOString();
    const text = statement('signup', c, issuedAt, [
      ['username', 'keyperson'],
      ['identity', identityPublicKey],
      ['device', devicePublicKey],
    ]);
    const signup = await t.gql(
      'mutation($i: SignupWithKeyInput!) { signupWithKey(input: $i) { user { username } csrfToken } }',
      {
        i: {
          username: 'keyperson',
          identityPublicKey,
          devicePublicKey,
          deviceName: 'Chromium on Linux',
          challengeId: c.challengeId,
          issuedAt,
          identitySignature: await sign(identity.privateKey, text),
          deviceSignature: await sign(device.privateKey, text),
          pow: { challengeId: reg.challengeId, nonce },
        },
      },
    );
    expect(signup.body.errors).toBeUndefined();
    expect(signup.body.data!.signupWithKey.user.username).toBe('keyperson');

    const c2 = (await t.gql(CHALLENGE)).body.data!.keyLoginChallenge;
    const at2 = new Date().toISOString();
    const login = await t.gql(
      'mutation($p: KeyLoginProof!) { loginWithKey(proof: $p) { user { username } } }',
      {
        p: {
          challengeId: c2.challengeId,
          devicePublicKey,
          issuedAt: at2,
          signature: await sign(
            device.privateKey,
            statement('login', c2, at2, [['device', devicePublicKey]]),
          ),
        },
      },
    );
    expect(login.body.errors).toBeUndefined();
    expect(login.body.data!.loginWithKey.user.username).toBe('keyperson');
  });

  it('is refused when the signed statement is not the login statement', async () => {
    const c = (await t.gql(CHALLENGE)).body.data!.keyLoginChallenge;
    const at = new Date().toISOString();
    const res = await t.gql(
      'mutation($p: KeyLoginProof!) { loginWithKey(proof: $p) { user { id } } }',
      {
        p: {
          challengeId: c.challengeId,
          devicePublicKey,
          issuedAt: at,
          signature: await sign(
            device.privateKey,
            statement('signup', c, at, [['device', devicePublicKey]]),
          ),
        },
      },
    );
    expect(res.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('solves to the first counter with enough zero bits', () => {
    const nonce = solvePow('salt-for-a-test', 12);
    expect(Number(nonce)).toBeGreaterThanOrEqual(0);
    expect(solvePow('salt-for-a-test', 12)).toBe(nonce);
    expect(solvePow('salt-for-a-test', 0)).toBe('0');
  });
});
