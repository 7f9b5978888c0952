import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signIn, signUpAndIn } from '../_util/seed.js';
import { expectCode, ok } from '../accounts/_helpers.js';

import {
  challenge,
  loginWithKey,
  newKey,
  nowIso,
  SIGNUP_WITH_KEY,
  signText,
  signUpWithKey,
  signupInput,
  statement,
  type TestKey,
} from './_keys.js';

const ENROLL = `mutation($input: EnrollIdentityKeyInput!) {
  enrollIdentityKey(input: $input) { user { id username } device { id current } keyIdentity { id publicKey } }
}`;
const ROTATE = `mutation($input: RotateIdentityKeyInput!) {
  rotateIdentityKey(input: $input) { id publicKey }
}`;
const LOGIN = `mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }`;

async function enrollInput(t: TestApp, accountId: string, identity: TestKey, device: TestKey) {
  const ch = await challenge(t);
  const issuedAt = nowIso(t);
  const text = statement('enroll-identity', ch, issuedAt, [
    ['account', accountId],
    ['identity', identity.publicKey],
    ['device', device.publicKey],
  ]);
  return {
    identityPublicKey: identity.publicKey,
    devicePublicKey: device.publicKey,
    deviceName: 'Desktop',
    challengeId: ch.challengeId,
    issuedAt,
    identitySignature: signText(identity, text),
    deviceSignature: signText(device, text),
  };
}

async function rotateInput(
  t: TestApp,
  old: TestKey,
  next: TestKey,
  signers: { old?: TestKey; next?: TestKey } = {},
) {
  const ch = await challenge(t);
  const issuedAt = nowIso(t);
  const text = statement('rotate-identity', ch, issuedAt, [
    ['identity', old.publicKey],
    ['new-identity', next.publicKey],
  ]);
  return {
    identityPublicKey: old.publicKey,
    newIdentityPublicKey: next.publicKey,
    challengeId: ch.challengeId,
    issuedAt,
    signature: signText(signers.old ?? old, text),
    newSignature: signText(signers.next ?? next, text),
  };
}

describe('identity keys: enrolment and rotation', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_OPEN_REGISTRATION: 'true' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('enrols a password account: other sessions end, this one is bound, the password stops working', async () => {
    const a = await signUpAndIn(t);
    const b = await signIn(t, a.username, DEFAULT_PASSWORD, a.id);
    const identity = newKey();
    const device = newKey();
    const ended: string[] = [];
    const off = t.ctx.services.sessions.onEnded((_ids, reason) => ended.push(reason));
    let data;
    try {
      data = ok(
        await t.gql(ENROLL, { input: await enrollInput(t, a.id, identity, device) }, a),
      ).enrollIdentityKey;
    } finally {
      off();
    }
    expect(ended).toEqual(['identity_key_enrolled']);
    expect(data.device.current).toBe(true);
    expect(data.keyIdentity.publicKey).toBe(identity.publicKey);
    expectCode(await t.gql('{ me { id } }', {}, b), 'UNAUTHENTICATED');
    const mine = ok(
      await t.gql('{ me { id } myDevices { id current } myKeyIdentity { id } }', {}, a),
    );
    expect(mine.myDevices).toEqual([{ id: data.device.id, current: true }]);
    expect(mine.myKeyIdentity.id).toBe(data.keyIdentity.id);
    expectCode(await t.gql(LOGIN, { u: a.username, p: DEFAULT_PASSWORD }), 'UNAUTHENTICATED');
    // The new device signs in with its key.
    const keyed = await loginWithKey(t, device, a.username);
    ok(await t.gql('{ me { id } }', {}, keyed));
    // Once is enough.
    expectCode(
      await t.gql(ENROLL, { input: await enrollInput(t, a.id, newKey(), newKey()) }, a),
      'CONFLICT',
    );
  });

  it('refuses an enrolment signed for another account or by the wrong keys', async () => {
    const a = await signUpAndIn(t);
    const other = await signUpAndIn(t);
    const identity = newKey();
    const device = newKey();
    const forOther = await enrollInput(t, other.id, identity, device);
    expectCode(await t.gql(ENROLL, { input: forOther }, a), 'UNAUTHENTICATED');
    const swapped = await enrollInput(t, a.id, identity, device);
    expectCode(
      await t.gql(ENROLL, { input: { ...swapped, deviceSignature: swapped.identitySignature } }, a),
      'UNAUTHENTICATED',
    );
    // Still a password account.
    ok(await t.gql(LOGIN, { u: a.username, p: DEFAULT_PASSWORD }));
  });

  it('refuses an enrolment with an identity key in use', async () => {
    const key = await signUpWithKey(t);
    const a = await signUpAndIn(t);
    expectCode(
      await t.gql(ENROLL, { input: await enrollInput(t, a.id, key.identity, newKey()) }, a),
      'CONFLICT',
    );
  });

  it('rotates the identity key without a session, signed by the old and the new key', async () => {
    const acc = await signUpWithKey(t);
    const next = newKey();
    // No cookie, no CSRF header.
    const rotated = ok(
      await t.gql(ROTATE, { input: await rotateInput(t, acc.identity, next) }),
    ).rotateIdentityKey;
    expect(rotated.publicKey).toBe(next.publicKey);
    expect(
      ok(await t.gql('{ myKeyIdentity { id publicKey } }', {}, acc.agent)).myKeyIdentity,
    ).toEqual(rotated);
    const row = await t.ctx.db.kysely
      .selectFrom('account')
      .select('keyIdentityId')
      .where('id', '=', acc.agent.id)
      .executeTakeFirstOrThrow();
    expect(row.keyIdentityId).toBe(rotated.id);
    // Devices and sessions are unaffected.
    ok(await t.gql('{ me { id } }', {}, acc.agent));
    await loginWithKey(t, acc.device, acc.username);
    // The old key no longer names the account.
    expectCode(
      await t.gql(ROTATE, { input: await rotateInput(t, acc.identity, newKey()) }),
      'UNAUTHENTICATED',
    );
    // Neither key can sign up again: both belong to a live account.
    const reuseOld = await signupInput(t, { identity: acc.identity });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: reuseOld.input }), 'CONFLICT');
    const reuseNew = await signupInput(t, { identity: next });
    expectCode(await t.gql(SIGNUP_WITH_KEY, { input: reuseNew.input }), 'CONFLICT');
  });

  it('recovers an identity: revokes lost devices, ends their sessions, adds a new device', async () => {
    const acc = await signUpWithKey(t);
    const mine = ok(await t.gql('{ myDevices { id } }', {}, acc.agent)).myDevices as Array<{
      id: string;
    }>;
    const lostId = mine[0]!.id;
    const ended: Array<[string[], string]> = [];
    const off = t.ctx.services.sessions.onEnded((ids, reason) => ended.push([ids, reason]));
    const recoverInput = async (
      next: TestKey,
      device: TestKey | null,
      revoke: string[],
      signedRevoke = revoke,
    ) => {
      const ch = await challenge(t);
      const issuedAt = nowIso(t);
      const lines: Array<[string, string]> = [
        ['identity', acc.identity.publicKey],
        ['new-identity', next.publicKey],
      ];
      if (signedRevoke.length > 0) lines.push(['revoke-devices', signedRevoke.join(',')]);
      if (device) lines.push(['device', device.publicKey]);
      const text = statement('rotate-identity', ch, issuedAt, lines);
      return {
        identityPublicKey: acc.identity.publicKey,
        newIdentityPublicKey: next.publicKey,
        challengeId: ch.challengeId,
        issuedAt,
        signature: signText(acc.identity, text),
        newSignature: signText(next, text),
        revokeDeviceIds: revoke,
        ...(device
          ? {
              devicePublicKey: device.publicKey,
              deviceName: 'Spare',
              deviceSignature: signText(device, text),
            }
          : {}),
      };
    };
    try {
      // The revocation list is signed: another list, or none, fails the statement.
      expectCode(
        await t.gql(ROTATE, { input: await recoverInput(newKey(), null, [lostId], []) }),
        'UNAUTHENTICATED',
      );
      // A key account may not be left without a device.
      expectCode(
        await t.gql(ROTATE, { input: await recoverInput(newKey(), null, [lostId]) }),
        'VALIDATION',
      );
      // A device of another account is NOT_FOUND, and nothing changes.
      const stranger = await signUpWithKey(t);
      const theirs = ok(await t.gql('{ myDevices { id } }', {}, stranger.agent)).myDevices[0].id;
      expectCode(
        await t.gql(ROTATE, { input: await recoverInput(newKey(), newKey(), [theirs]) }),
        'NOT_FOUND',
      );
      ok(await t.gql('{ me { id } }', {}, stranger.agent));
      ok(await t.gql('{ me { id } }', {}, acc.agent));

      const next = newKey();
      const spare = newKey();
      const res = await t.gql(ROTATE, { input: await recoverInput(next, spare, [lostId]) });
      expect(ok(res).rotateIdentityKey.publicKey).toBe(next.publicKey);
      // The lost device's session ended, with the identity_recovery reason; its key is dead.
      expectCode(await t.gql('{ me { id } }', {}, acc.agent), 'UNAUTHENTICATED');
      expect(ended.find(([, r]) => r === 'identity_recovery')).toBeDefined();
      const rows = await t.ctx.db.kysely
        .selectFrom('session')
        .select('endReason')
        .where('accountId', '=', acc.agent.id)
        .execute();
      expect(rows.map((r) => r.endReason)).toContain('identity_recovery');
      await expect(loginWithKey(t, acc.device, acc.username)).rejects.toThrow();
      // The new device signs in.
      const back = await loginWithKey(t, spare, acc.username);
      const devices = ok(await t.gql('{ myDevices { name current } }', {}, back)).myDevices;
      expect(devices).toEqual([{ name: 'Spare', current: true }]);
    } finally {
      off();
    }
  });

  it('refuses a rotation not signed by the current key, or by the new one', async () => {
    const acc = await signUpWithKey(t);
    const next = newKey();
    const attacker = newKey();
    expectCode(
      await t.gql(ROTATE, {
        input: await rotateInput(t, acc.identity, next, { old: attacker }),
      }),
      'UNAUTHENTICATED',
    );
    expectCode(
      await t.gql(ROTATE, {
        input: await rotateInput(t, acc.identity, next, { next: attacker }),
      }),
      'UNAUTHENTICATED',
    );
    expectCode(
      await t.gql(ROTATE, { input: await rotateInput(t, acc.identity, acc.identity) }),
      'VALIDATION',
    );
    expect(
      ok(await t.gql('{ myKeyIdentity { publicKey } }', {}, acc.agent)).myKeyIdentity.publicKey,
    ).toBe(acc.identity.publicKey);
  });

  it("with a session, rotates only the caller's own key and needs the CSRF header", async () => {
    const acc = await signUpWithKey(t);
    const other = await signUpWithKey(t);
    expectCode(
      await t.gql(ROTATE, { input: await rotateInput(t, other.identity, newKey()) }, acc.agent),
      'VALIDATION',
    );
    const noCsrf: Agent = { ...acc.agent, csrfToken: '' };
    const refused = await t.gql(
      ROTATE,
      { input: await rotateInput(t, acc.identity, newKey()) },
      noCsrf,
    );
    expect(refused.body.errors?.[0]?.message).toMatch(/csrf/);
    ok(await t.gql(ROTATE, { input: await rotateInput(t, acc.identity, newKey()) }, acc.agent));
  });

  it('refuses a password account rotating (it has no identity key)', async () => {
    const a = await signUpAndIn(t);
    expectCode(
      await t.gql(ROTATE, { input: await rotateInput(t, newKey(), newKey()) }, a),
      'VALIDATION',
    );
  });
});
