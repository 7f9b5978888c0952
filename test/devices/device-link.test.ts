import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { expectCode, ok } from '../accounts/_helpers.js';
import { MlsDevice } from '../e2ee/_client.js';

import {
  challenge,
  LOGIN_WITH_KEY,
  loginProof,
  loginWithKey,
  newKey,
  nowIso,
  signText,
  signUpWithKey,
  statement,
  type KeyAccount,
  type TestKey,
} from './_keys.js';

const SEND_OFFER = `mutation($input: SendDeviceLinkOfferInput!) {
  sendDeviceLinkOffer(input: $input) { offerId code offerSecret expiresAt }
}`;
const APPROVE = `mutation($input: ApproveDeviceLinkInput!) {
  approveDeviceLink(input: $input) { id name publicKey current encryptionReady }
}`;
const CANCEL = `mutation($id: ID!, $secret: String) { cancelDeviceLink(offerId: $id, offerSecret: $secret) }`;
const STATUS = `query($id: ID!, $secret: String!) { deviceLinkOfferStatus(offerId: $id, offerSecret: $secret) }`;
const REVOKE = 'mutation($id: ID!) { revokeDevice(deviceId: $id) }';
const PUBLISH = `mutation($id: ID!, $kp: String!) {
  publishKeyPackage(deviceId: $id, keyPackage: $kp) { id encryptionReady }
}`;

async function offerInput(t: TestApp, username: string, device: TestKey, name = 'Phone') {
  const ch = await challenge(t);
  const issuedAt = nowIso(t);
  const text = statement('device-link', ch, issuedAt, [
    ['username', username],
    ['device', device.publicKey],
  ]);
  return {
    username,
    devicePublicKey: device.publicKey,
    deviceName: name,
    challengeId: ch.challengeId,
    issuedAt,
    signature: signText(device, text),
  };
}

async function sendOffer(t: TestApp, username: string, device: TestKey, name = 'Phone') {
  const res = await t.gql(SEND_OFFER, { input: await offerInput(t, username, device, name) });
  return ok(res).sendDeviceLinkOffer as {
    offerId: string;
    code: string;
    offerSecret: string;
    expiresAt: string;
  };
}

/** Links a new device to `acc` and signs it in. */
async function linkDevice(t: TestApp, acc: KeyAccount, name = 'Phone') {
  const device = newKey();
  const offer = await sendOffer(t, acc.username, device, name);
  const approved = ok(
    await t.gql(APPROVE, { input: { offerId: offer.offerId, code: offer.code } }, acc.agent),
  ).approveDeviceLink;
  return { device, id: approved.id as string, agent: await loginWithKey(t, device, acc.username) };
}

describe('device links, revocation and key packages', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_OPEN_REGISTRATION: 'true' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('links a new device: offer, listed without its code, approved with the code', async () => {
    const acc = await signUpWithKey(t);
    const device = newKey();
    // No session and no CSRF header on the new device.
    const offer = await sendOffer(t, acc.username.toUpperCase(), device, 'Phone');
    expect(offer.code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    expect(Date.parse(offer.expiresAt)).toBe(clock.now().getTime() + 10 * MINUTE_MS);

    const listed = ok(
      await t.gql('{ deviceLinkOffers { id deviceName devicePublicKey } }', {}, acc.agent),
    ).deviceLinkOffers;
    expect(listed).toEqual([
      { id: offer.offerId, deviceName: 'Phone', devicePublicKey: device.publicKey },
    ]);
    expect(
      ok(await t.gql(STATUS, { id: offer.offerId, secret: offer.offerSecret }))
        .deviceLinkOfferStatus,
    ).toBe('PENDING');
    expectCode(await t.gql(STATUS, { id: offer.offerId, secret: 'wrong' }), 'NOT_FOUND');

    // The new device cannot sign in before approval.
    expectCode(
      await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, device) }),
      'UNAUTHENTICATED',
    );

    const wrong = await t.gql(
      APPROVE,
      { input: { offerId: offer.offerId, code: 'AAAA-AAAA' } },
      acc.agent,
    );
    expectCode(wrong, 'VALIDATION');
    expect(wrong.body.errors![0]!.message).toMatch(/4 attempts left/);

    const approved = ok(
      await t.gql(
        APPROVE,
        { input: { offerId: offer.offerId, code: offer.code.toLowerCase().replace('-', ' ') } },
        acc.agent,
      ),
    ).approveDeviceLink;
    expect(approved).toMatchObject({
      name: 'Phone',
      publicKey: device.publicKey,
      current: false,
      encryptionReady: false,
    });
    expect(
      ok(await t.gql(STATUS, { id: offer.offerId, secret: offer.offerSecret }))
        .deviceLinkOfferStatus,
    ).toBe('APPROVED');
    const agent = await loginWithKey(t, device, acc.username);
    const devices = ok(await t.gql('{ myDevices { id current } }', {}, agent)).myDevices;
    expect(devices).toHaveLength(2);
    expect(devices.find((d: { id: string }) => d.id === approved.id).current).toBe(true);
    // Approving again changes nothing.
    expectCode(
      await t.gql(APPROVE, { input: { offerId: offer.offerId, code: offer.code } }, acc.agent),
      'CONFLICT',
    );
  });

  it('lets the new device cancel with its secret and no session or CSRF header', async () => {
    const acc = await signUpWithKey(t);
    const offer = await sendOffer(t, acc.username, newKey());
    expect(
      ok(await t.gql(CANCEL, { id: offer.offerId, secret: offer.offerSecret })).cancelDeviceLink,
    ).toBe(true);
    expect(
      ok(await t.gql(CANCEL, { id: offer.offerId, secret: offer.offerSecret })).cancelDeviceLink,
    ).toBe(false);
    expect(
      ok(await t.gql(STATUS, { id: offer.offerId, secret: offer.offerSecret }))
        .deviceLinkOfferStatus,
    ).toBe('CANCELLED');
    expectCode(
      await t.gql(APPROVE, { input: { offerId: offer.offerId, code: offer.code } }, acc.agent),
      'CONFLICT',
    );
    // Without the secret and without a session: UNAUTHENTICATED; with a wrong secret: NOT_FOUND.
    const other = await sendOffer(t, acc.username, newKey());
    expectCode(await t.gql(CANCEL, { id: other.offerId }), 'UNAUTHENTICATED');
    expectCode(await t.gql(CANCEL, { id: other.offerId, secret: 'guess' }), 'NOT_FOUND');
    // A signed-in device of the account cancels without the secret (with the CSRF header).
    expect(ok(await t.gql(CANCEL, { id: other.offerId }, acc.agent)).cancelDeviceLink).toBe(true);
    // ... but never another account's offer.
    const stranger = await signUpWithKey(t);
    const theirs = await sendOffer(t, stranger.username, newKey());
    expectCode(await t.gql(CANCEL, { id: theirs.offerId }, acc.agent), 'NOT_FOUND');
    expectCode(
      await t.gql(APPROVE, { input: { offerId: theirs.offerId, code: theirs.code } }, acc.agent),
      'NOT_FOUND',
    );
  });

  it('needs the CSRF header for cancelDeviceLink when the request carries a session cookie', async () => {
    const acc = await signUpWithKey(t);
    const offer = await sendOffer(t, acc.username, newKey());
    const res = await t.gql(
      CANCEL,
      { id: offer.offerId, secret: offer.offerSecret },
      {
        ...acc.agent,
        csrfToken: '',
      },
    );
    expect(res.body.errors?.[0]?.message).toMatch(/csrf/);
    expect(res.body.errors?.[0]?.extensions?.code).toBeUndefined();
  });

  it('cancels an offer after five wrong codes', async () => {
    const acc = await signUpWithKey(t);
    const offer = await sendOffer(t, acc.username, newKey());
    for (let i = 0; i < 5; i++) {
      expectCode(
        await t.gql(APPROVE, { input: { offerId: offer.offerId, code: 'ZZZZ-ZZZZ' } }, acc.agent),
        'VALIDATION',
      );
    }
    expectCode(
      await t.gql(APPROVE, { input: { offerId: offer.offerId, code: offer.code } }, acc.agent),
      'CONFLICT',
    );
  });

  it('lets an offer expire after ten minutes', async () => {
    const acc = await signUpWithKey(t);
    const offer = await sendOffer(t, acc.username, newKey());
    clock.advance(10 * MINUTE_MS + 1);
    expect(
      ok(await t.gql(STATUS, { id: offer.offerId, secret: offer.offerSecret }))
        .deviceLinkOfferStatus,
    ).toBe('EXPIRED');
    expectCode(
      await t.gql(APPROVE, { input: { offerId: offer.offerId, code: offer.code } }, acc.agent),
      'VALIDATION',
    );
    expect(ok(await t.gql('{ deviceLinkOffers { id } }', {}, acc.agent)).deviceLinkOffers).toEqual(
      [],
    );
  });

  it('refuses offers for unknown and password accounts, and approval without a device', async () => {
    expectCode(
      await t.gql(SEND_OFFER, { input: await offerInput(t, 'nobody-here', newKey()) }),
      'NOT_FOUND',
    );
    const pw = await signUpAndIn(t);
    expectCode(
      await t.gql(SEND_OFFER, { input: await offerInput(t, pw.username, newKey()) }),
      'VALIDATION',
    );
    const acc = await signUpWithKey(t);
    // A device key registered already, or an offer signed by another key.
    expectCode(
      await t.gql(SEND_OFFER, { input: await offerInput(t, acc.username, acc.device) }),
      'CONFLICT',
    );
    const input = await offerInput(t, acc.username, newKey());
    expectCode(
      await t.gql(SEND_OFFER, { input: { ...input, devicePublicKey: newKey().publicKey } }),
      'UNAUTHENTICATED',
    );
    const offer = await sendOffer(t, acc.username, newKey());
    // A password session is bound to no device.
    expectCode(
      await t.gql(APPROVE, { input: { offerId: offer.offerId, code: offer.code } }, pw),
      'FORBIDDEN',
    );
  });

  it('revokes a device: its sessions end at once and its key is dead', async () => {
    const acc = await signUpWithKey(t);
    const linked = await linkDevice(t, acc);
    const ended: Array<[string[], string]> = [];
    const off = t.ctx.services.sessions.onEnded((ids, reason) => ended.push([ids, reason]));
    try {
      expect(ok(await t.gql(REVOKE, { id: linked.id }, acc.agent)).revokeDevice).toBe(true);
    } finally {
      off();
    }
    expect(ended).toHaveLength(1);
    expect(ended[0]![1]).toBe('device_revoked');
    expectCode(await t.gql('{ me { id } }', {}, linked.agent), 'UNAUTHENTICATED');
    ok(await t.gql('{ me { id } }', {}, acc.agent));
    expect(ok(await t.gql('{ myDevices { id } }', {}, acc.agent)).myDevices).toHaveLength(1);
    expectCode(
      await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, linked.device) }),
      'UNAUTHENTICATED',
    );
    expectCode(
      await t.gql(SEND_OFFER, { input: await offerInput(t, acc.username, linked.device) }),
      'CONFLICT',
    );
    expectCode(await t.gql(REVOKE, { id: linked.id }, acc.agent), 'NOT_FOUND');
  });

  it('revoking the calling device signs it out; the last device cannot go', async () => {
    const acc = await signUpWithKey(t);
    const linked = await linkDevice(t, acc);
    const res = await t.gql(REVOKE, { id: linked.id }, linked.agent);
    expect(ok(res).revokeDevice).toBe(true);
    const cleared = res.response.cookies.find((c: { name: string }) => c.name === 'svc_session');
    expect(cleared?.value).toBe('');
    const own = ok(await t.gql('{ myDevices { id } }', {}, acc.agent)).myDevices[0].id;
    expectCode(await t.gql(REVOKE, { id: own }, acc.agent), 'VALIDATION');
    const stranger = await signUpWithKey(t);
    expectCode(await t.gql(REVOKE, { id: own }, stranger.agent), 'NOT_FOUND');
  });

  it('stores key packages from the device itself and reports encryption readiness', async () => {
    const acc = await signUpWithKey(t);
    const linked = await linkDevice(t, acc);
    expect(await t.ctx.services.devices.hasEncryptionDevice(acc.agent.id)).toBe(false);
    expectCode(await t.gql(PUBLISH, { id: linked.id, kp: 'AAAA' }, acc.agent), 'FORBIDDEN');
    for (const bad of ['', 'not base64!', 'A'.repeat(65_537)]) {
      expectCode(await t.gql(PUBLISH, { id: linked.id, kp: bad }, linked.agent), 'VALIDATION');
    }
    // A real MLS KeyPackage whose credential names the device (docs/e2ee.md).
    const kp = await (await MlsDevice.of(t, linked.agent)).keyPackage();
    expect(ok(await t.gql(PUBLISH, { id: linked.id, kp }, linked.agent)).publishKeyPackage).toEqual(
      { id: linked.id, encryptionReady: true },
    );
    expect(await t.ctx.services.devices.hasEncryptionDevice(acc.agent.id)).toBe(true);
    const devices = ok(await t.gql('{ myDevices { id encryptionReady } }', {}, acc.agent))
      .myDevices as Array<{ id: string; encryptionReady: boolean }>;
    expect(devices.filter((d) => d.encryptionReady).map((d) => d.id)).toEqual([linked.id]);
    // A revoked device is not set up for encryption any more.
    ok(await t.gql(REVOKE, { id: linked.id }, acc.agent));
    expect(await t.ctx.services.devices.hasEncryptionDevice(acc.agent.id)).toBe(false);
  });
});

describe('the device cap', () => {
  it('refuses one more device than SVC_LIMIT_DEVICES_PER_USER with VALIDATION naming the cap', async () => {
    const t = await createTestApp({
      env: { SVC_OPEN_REGISTRATION: 'true', SVC_LIMIT_DEVICES_PER_USER: '2' },
    });
    try {
      const acc = await signUpWithKey(t);
      const first = await sendOffer(t, acc.username, newKey());
      const second = await sendOffer(t, acc.username, newKey());
      ok(await t.gql(APPROVE, { input: { offerId: first.offerId, code: first.code } }, acc.agent));
      const res = await t.gql(
        APPROVE,
        { input: { offerId: second.offerId, code: second.code } },
        acc.agent,
      );
      expectCode(res, 'VALIDATION');
      expect(res.body.errors![0]!.message).toMatch(
        /devices per user.*2.*SVC_LIMIT_DEVICES_PER_USER/,
      );
      // A new offer is refused up front.
      expectCode(
        await t.gql(SEND_OFFER, { input: await offerInput(t, acc.username, newKey()) }),
        'VALIDATION',
      );
    } finally {
      await t.close();
    }
  });

  it('applies the relay quota when it is stricter than the cap', async () => {
    const t = await createTestApp({
      env: {
        SVC_OPEN_REGISTRATION: 'true',
        SVC_LIMIT_DEVICES_PER_USER: '5',
        SVC_RELAY_DEVICES_PER_USER: '1',
      },
    });
    try {
      const info = ok(await t.gql('{ serverInfo { limits { devicesPerUser } } }'));
      expect(info.serverInfo.limits.devicesPerUser).toBe(1);
      const acc = await signUpWithKey(t);
      const res = await t.gql(SEND_OFFER, { input: await offerInput(t, acc.username, newKey()) });
      expectCode(res, 'VALIDATION');
      expect(res.body.errors![0]!.message).toMatch(/capped at 1/);
    } finally {
      await t.close();
    }
  });
});
