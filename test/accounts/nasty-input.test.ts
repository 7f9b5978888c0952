import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

// Nasty values for each String argument of the account, session, device and deletion mutations.
// A NUL reached PostgreSQL as text (which refuses it) and answered INTERNAL before the fix.
const NASTY: unknown[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b@example.org',
  'x'.repeat(200_000),
  '\ud800',
  '👩‍👩‍👧‍👦'.repeat(300),
  'ＡＤＭＩＮ',
  '\u202e\u200b',
  '../../etc/passwd',
  "'; DROP TABLE account; --",
];

const CASES: Array<[string, (v: unknown) => Record<string, unknown>, string]> = [
  [
    'mutation($v: String!) { login(input: { username: $v, password: $v }) { csrfToken } }',
    (v) => ({ v }),
    'anon',
  ],
  [
    'mutation($v: String!) { signupWithInvite(input: { username: $v, password: $v, email: $v, inviteToken: $v, acceptedTermsUrl: $v, displayName: $v }) { csrfToken } }',
    (v) => ({ v }),
    'anon',
  ],
  [
    'mutation($v: String!) { signupWithInvite(input: { username: "okname", password: "long enough pw", pow: { challengeId: $v, nonce: $v } }) { csrfToken } }',
    (v) => ({ v }),
    'anon',
  ],
  [
    'mutation($v: String!) { requestPasswordReset(input: { emailOrUsername: $v }) }',
    (v) => ({ v }),
    'anon',
  ],
  [
    'mutation($v: String!) { resetPassword(input: { token: $v, newPassword: $v }) }',
    (v) => ({ v }),
    'anon',
  ],
  [
    'mutation($v: ID!, $s: String!) { loginWithKey(proof: { challengeId: $v, deviceId: $v, devicePublicKey: $s, issuedAt: $s, signature: $s }) { csrfToken } }',
    (v) => ({ v, s: v }),
    'anon',
  ],
  [
    'mutation($v: String!, $i: ID!) { signupWithKey(input: { username: $v, displayName: $v, identityPublicKey: $v, devicePublicKey: $v, deviceName: $v, challengeId: $i, issuedAt: $v, identitySignature: $v, deviceSignature: $v, inviteToken: $v, acceptedTermsUrl: $v }) { csrfToken } }',
    (v) => ({ v, i: v }),
    'anon',
  ],
  [
    'mutation($v: String!, $i: ID!) { sendDeviceLinkOffer(input: { username: $v, devicePublicKey: $v, deviceName: $v, challengeId: $i, issuedAt: $v, signature: $v }) { offerId } }',
    (v) => ({ v, i: v }),
    'anon',
  ],
  [
    'mutation($v: String!, $i: ID!) { rotateIdentityKey(input: { identityPublicKey: $v, newIdentityPublicKey: $v, challengeId: $i, issuedAt: $v, signature: $v, newSignature: $v }) { id } }',
    (v) => ({ v, i: v }),
    'anon',
  ],
  [
    'mutation($i: ID!, $v: String) { cancelDeviceLink(offerId: $i, offerSecret: $v) }',
    (v) => ({ v, i: v }),
    'anon',
  ],
  [
    'query($i: ID!, $v: String!) { deviceLinkOfferStatus(offerId: $i, offerSecret: $v) }',
    (v) => ({ v, i: v }),
    'anon',
  ],
  [
    'mutation($v: String!) { requestAccountDeletion(input: { confirmUsername: $v }) { scheduledFor } }',
    (v) => ({ v }),
    'user',
  ],
  [
    'mutation($v: String!) { changePassword(input: { currentPassword: $v, newPassword: $v }) }',
    (v) => ({ v }),
    'user',
  ],
  [
    'mutation($v: String) { updateProfile(input: { displayName: $v }) { id } }',
    (v) => ({ v }),
    'user',
  ],
  ['mutation($i: ID!) { revokeSession(id: $i) }', (v) => ({ i: v }), 'user'],
  ['mutation($i: ID!) { revokeDevice(deviceId: $i) }', (v) => ({ i: v }), 'user'],
  [
    'mutation($i: ID!, $v: String!) { approveDeviceLink(input: { offerId: $i, code: $v, deviceName: $v }) { id } }',
    (v) => ({ v, i: v }),
    'user',
  ],
  [
    'mutation($v: String!, $i: ID!) { enrollIdentityKey(input: { identityPublicKey: $v, devicePublicKey: $v, deviceName: $v, challengeId: $i, issuedAt: $v, identitySignature: $v, deviceSignature: $v }) { user { id } } }',
    (v) => ({ v, i: v }),
    'user',
  ],
  [
    'mutation($i: ID!, $v: String!) { publishKeyPackage(deviceId: $i, keyPackage: $v) { id } }',
    (v) => ({ v, i: v }),
    'user',
  ],
  [
    'mutation($v: String, $n: Int) { createInstanceInvite(email: $v, expiresInDays: $n, maxUses: $n) { token } }',
    (v) => ({ v, n: 2147483647 }),
    'op',
  ],
  ['mutation($i: ID!) { revokeInstanceInvite(id: $i) }', (v) => ({ i: v }), 'op'],
];

describe('nasty input through GraphQL never answers INTERNAL', () => {
  let t: TestApp;
  let user: Agent;
  let op: Agent;
  beforeAll(async () => {
    t = await createTestApp({
      env: { SVC_SIGNUP_REQUIRE_KEYS: 'false', SVC_OPEN_REGISTRATION: 'true' },
    });
    user = await signUpAndIn(t, { username: 'nasty' });
    op = await signUpAndIn(t, { username: 'nastyop', operator: true });
  });
  afterAll(async () => t?.close());

  it('answers every nasty string with a coded error or a plain answer', async () => {
    const seen: string[] = [];
    for (const [query, vars, who] of CASES) {
      for (const v of NASTY) {
        const agent = who === 'anon' ? null : who === 'op' ? op : user;
        const res = await t.gql(query, vars(v), agent);
        for (const e of res.body.errors ?? []) {
          const code = e.extensions?.code as string | undefined;
          const where = `${query.slice(0, 60)} ${JSON.stringify(v).slice(0, 30)}: ${e.message.slice(0, 120)}`;
          if (code === 'INTERNAL' || code === undefined) seen.push(`${code} ${where}`);
        }
      }
    }
    expect(seen).toEqual([]);
    // None of it ended the caller's session (revokeSession(id: "") once ended all of them).
    const me = await t.gql('{ me { id } }', {}, user);
    expect(me.body.errors).toBeUndefined();
  });

  it('answers nulls and wrong types before any resolver, with no INTERNAL', async () => {
    const docs: Array<[string, Record<string, unknown>]> = [
      [
        'mutation($v: String!) { login(input: { username: $v, password: "x" }) { csrfToken } }',
        { v: null },
      ],
      [
        'mutation($v: String!) { login(input: { username: $v, password: "x" }) { csrfToken } }',
        { v: 12 },
      ],
      [
        'mutation($v: String!) { login(input: { username: $v, password: "x" }) { csrfToken } }',
        { v: { a: 1 } },
      ],
      [
        'mutation($v: LoginInput!) { login(input: $v) { csrfToken } }',
        { v: { username: 'a', password: ['x'] } },
      ],
      [
        'mutation($v: LoginInput!) { login(input: $v) { csrfToken } }',
        { v: { username: 'a', password: 'x', extra: 1 } },
      ],
      [
        'mutation($v: ID!) { loginWithKey(proof: { challengeId: $v, issuedAt: "x", signature: "y" }) { csrfToken } }',
        { v: 1.5 },
      ],
    ];
    for (const [q, v] of docs) {
      const res = await t.gql(q, v);
      expect(res.body.errors?.length, q).toBeGreaterThan(0);
      for (const e of res.body.errors ?? []) expect(e.extensions?.code).not.toBe('INTERNAL');
    }
  });
});
