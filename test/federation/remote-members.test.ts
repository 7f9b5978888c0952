import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { signUpAndIn } from '../_util/seed.js';
import type { KeyAccount } from '../devices/_keys.js';
import { filePart, makeImage, multipart } from '../files/_image-upload.js';

import {
  checkHostResponse,
  discoveryKey,
  hostKeyViaRelay,
  keyUser,
  startPeer,
  viaRelay,
  viaRelayRaw,
  type Peer,
} from './_fed.js';

const ME = '{ me { username homeServer } }';
const CREATE_DM = `mutation($m: [ID!]!) {
  createConversation(input: { memberIds: $m }) { conversation { id } dmRequestsSent { id } }
}`;

// A person of relay A on host B (docs/federation.md, "People from other servers on a host"):
// their account lives at A, the host's quotas hold them, and they follow B's key through a
// rotation but never through a fork.
describe('a person from another server on a host', () => {
  let a: Peer;
  let b: Peer;
  let alice: KeyAccount;

  beforeAll(async () => {
    a = await startPeer();
    b = await startPeer({ env: { SVC_ROLE: 'host', SVC_RELAY_DM_REQUESTS_PER_DAY: '1' } });
    alice = await keyUser(a, 'alice');
    const me = await viaRelay(a, alice, b.id, ME);
    expect(me.json().data.me).toEqual({ username: `alice@${a.id}`, homeServer: a.id });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('every mutation of their account answers FORBIDDEN on the host', async () => {
    const id = '00000000000000000000000000';
    const key = (c: string) => c.repeat(43);
    const keys = `identityPublicKey: "${key('A')}", challengeId: "c", issuedAt: "2030-01-01T00:00:00Z"`;
    const mutations = [
      'mutation { updateProfile(input: { displayName: "Someone else" }) { id } }',
      'mutation { changePassword(input: { currentPassword: "whatever it is", newPassword: "a new password" }) }',
      'mutation { requestAccountDeletion(input: { confirmUsername: "alice" }) { scheduledFor } }',
      'mutation { cancelAccountDeletion }',
      `mutation { enrollIdentityKey(input: { ${keys}, devicePublicKey: "${key('B')}", identitySignature: "s", deviceSignature: "s" }) { user { id } } }`,
      `mutation { rotateIdentityKey(input: { ${keys}, newIdentityPublicKey: "${key('B')}", signature: "s", newSignature: "s" }) { id } }`,
      `mutation { approveDeviceLink(input: { offerId: "${id}", code: "ABCD-EFGH" }) { id } }`,
      `mutation { cancelDeviceLink(offerId: "${id}") }`,
      `mutation { revokeDevice(deviceId: "${id}") }`,
      `mutation { publishKeyPackage(deviceId: "${id}", keyPackage: "AAAA") { id } }`,
    ];
    for (const m of mutations) {
      const res = await viaRelay(a, alice, b.id, m);
      expect(res.status, m).toBe(200);
      expect(res.json().errors?.[0]?.extensions?.code, m).toBe('FORBIDDEN');
      expect(res.json().errors[0].message, m).toContain(a.id);
    }
    // The avatar is a file route: 403 in its shape, signed by the host.
    const form = multipart([filePart(await makeImage('png'), 'image/png', 'me.png')]);
    const avatar = await viaRelayRaw(a, alice, b.id, {
      method: 'POST',
      path: '/api/files/avatar',
      body: form.body,
      contentType: form.contentType,
    });
    expect(avatar.status).toBe(403);
    expect(avatar.json()).toEqual({ error: expect.stringContaining(a.id) });
    checkHostResponse(avatar, { host: b.id, hostKey: await discoveryKey(b) });
    // Nothing changed.
    const after = await viaRelay(a, alice, b.id, '{ me { displayName avatarUrl } }');
    expect(after.json().data.me).toEqual({ displayName: null, avatarUrl: null });
    // A setting about their life on this server is theirs to change here.
    const dm = await viaRelay(
      a,
      alice,
      b.id,
      'mutation { updateDmSettings(input: { inbound: SHARED_WORKSPACE }) { inbound } }',
    );
    expect(dm.json()).toEqual({ data: { updateDmSettings: { inbound: 'SHARED_WORKSPACE' } } });
  });

  it('DM requests past the relay quota answer RATE_LIMITED with retryAfterSeconds', async () => {
    const info = await b.t.gql('{ serverInfo { limits { dmRequestsPerDay } } }');
    expect(info.body.data!.serverInfo.limits.dmRequestsPerDay).toBe(1);
    const first = await signUpAndIn(b.t);
    const second = await signUpAndIn(b.t);
    const sent = await viaRelay(a, alice, b.id, CREATE_DM, { m: [first.id] });
    expect(sent.json().errors).toBeUndefined();
    expect(sent.json().data.createConversation.dmRequestsSent).toHaveLength(1);
    const refused = await viaRelay(a, alice, b.id, CREATE_DM, { m: [second.id] });
    expect(refused.status).toBe(200);
    const err = refused.json().errors[0];
    expect(err.extensions.code).toBe('RATE_LIMITED');
    expect(err.message).toContain('SVC_RELAY_DM_REQUESTS_PER_DAY');
    // The slot frees a day after the first request.
    expect(err.extensions.retryAfterSeconds).toBeGreaterThan(86_400 - 60);
    expect(err.extensions.retryAfterSeconds).toBeLessThanOrEqual(86_400);
    checkHostResponse(refused, { host: b.id, hostKey: await discoveryKey(b) });
  });

  it("the relay and the client follow the host's signed key rotation", async () => {
    const before = await discoveryKey(b);
    const rotated = await b.ctx.federation.keyLog.rotate();
    expect(rotated.previousKey).toBe(before);
    const res = await viaRelay(a, alice, b.id, ME);
    expect(res.status).toBe(200);
    // The client follows the rotation through the key log, link by link, as the relay did.
    const hostKey = await hostKeyViaRelay(a, alice, b.id);
    expect(hostKey).toBe(rotated.key);
    checkHostResponse(res, { host: b.id, hostKey });
    const pin = await a.ctx.db.kysely
      .selectFrom('s2s_peer')
      .select('currentKey')
      .where('serverId', '=', b.id)
      .executeTakeFirstOrThrow();
    expect(pin.currentKey).toBe(rotated.key);
    expect(a.logs.find('peer key rotation followed')).toMatchObject({ peer: b.id });
  });

  it('a host that comes back at the same address with another key is refused: 502', async () => {
    const port = Number(new URL(b.url).port);
    await b.stop();
    b = await startPeer({ port, env: { SVC_ROLE: 'host' } });
    const res = await viaRelay(a, alice, b.id, ME);
    expect(res.status).toBe(502);
    expect(res.json()).toEqual({
      error: 'upstream_unavailable',
      message: expect.any(String),
      hostServerId: b.id,
    });
    expect(
      a.logs.find('peer key log does not extend the pinned one (fork); keeping the pin'),
    ).toMatchObject({ peer: b.id });
  });
});
