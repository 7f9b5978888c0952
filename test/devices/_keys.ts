import { expect } from 'vitest';

import { setCookies, type Agent, type GqlResponse, type TestApp } from '../_util/app.js';
import { newKey, signText, statement, type TestKey } from './_statements.js';

// A test client's side of docs/keys.md, written from the document rather than from the server's
// code, so a change of the statement format breaks these tests.

export { newKey, signText, statement, type TestKey };

export interface Challenge {
  challengeId: string;
  nonce: string;
  expiresAt: string;
  serverKey: string;
}

export async function challenge(t: TestApp): Promise<Challenge> {
  const res = await t.gql(
    'mutation { keyLoginChallenge { challengeId nonce expiresAt serverKey } }',
  );
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  return res.body.data!.keyLoginChallenge as Challenge;
}

export const nowIso = (t: TestApp) => t.ctx.clock.now().toISOString();

/** The agent of a response that started a session (field `field` of data). */
export function agentOf(res: GqlResponse, field: string, username: string): Agent {
  expect(res.body.errors, JSON.stringify(res.body.errors)).toBeUndefined();
  const cookies = setCookies(res.response);
  const payload = res.body.data![field];
  return {
    id: payload.user.id,
    username,
    cookies: { svc_session: cookies.svc_session!.value, svc_csrf: cookies.svc_csrf!.value },
    csrfToken: payload.csrfToken,
  };
}

export const SIGNUP_WITH_KEY = `mutation($input: SignupWithKeyInput!) {
  signupWithKey(input: $input) { csrfToken expiresAt serverId user { id username email } }
}`;

export const LOGIN_WITH_KEY = `mutation($proof: KeyLoginProof!) {
  loginWithKey(proof: $proof) { csrfToken expiresAt user { id username } }
}`;

export interface KeyAccount {
  agent: Agent;
  identity: TestKey;
  device: TestKey;
  username: string;
}

let counter = 0;
export const uniqueUsername = (prefix = 'key') =>
  `${prefix}${Date.now().toString(36).slice(-4)}${(counter++).toString(36)}`;

/** Builds the signupWithKey input, signed correctly unless overrides say otherwise. */
export async function signupInput(
  t: TestApp,
  opts: {
    username?: string;
    identity?: TestKey;
    device?: TestKey;
    extra?: Record<string, unknown>;
  } = {},
) {
  const username = opts.username ?? uniqueUsername();
  const identity = opts.identity ?? newKey();
  const device = opts.device ?? newKey();
  const ch = await challenge(t);
  const issuedAt = nowIso(t);
  const text = statement('signup', ch, issuedAt, [
    ['username', username],
    ['identity', identity.publicKey],
    ['device', device.publicKey],
  ]);
  return {
    username,
    identity,
    device,
    text,
    input: {
      username,
      identityPublicKey: identity.publicKey,
      devicePublicKey: device.publicKey,
      deviceName: 'Laptop',
      challengeId: ch.challengeId,
      issuedAt,
      identitySignature: signText(identity, text),
      deviceSignature: signText(device, text),
      ...opts.extra,
    },
  };
}

/** Signs a new key account up (open registration) and returns its agent and keys. */
export async function signUpWithKey(
  t: TestApp,
  opts: { username?: string; identity?: TestKey; device?: TestKey } = {},
): Promise<KeyAccount> {
  const s = await signupInput(t, opts);
  const res = await t.gql(SIGNUP_WITH_KEY, { input: s.input });
  return {
    agent: agentOf(res, 'signupWithKey', s.username),
    identity: s.identity,
    device: s.device,
    username: s.username,
  };
}

/** A correctly signed login proof for a device key. */
export async function loginProof(t: TestApp, device: TestKey, opts: { issuedAt?: string } = {}) {
  const ch = await challenge(t);
  const issuedAt = opts.issuedAt ?? nowIso(t);
  const text = statement('login', ch, issuedAt, [['device', device.publicKey]]);
  return {
    challengeId: ch.challengeId,
    devicePublicKey: device.publicKey,
    issuedAt,
    signature: signText(device, text),
  };
}

export async function loginWithKey(t: TestApp, device: TestKey, username: string) {
  const res = await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, device) });
  return agentOf(res, 'loginWithKey', username);
}
