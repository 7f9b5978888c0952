import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { verifyKeyLog } from '../../src/federation/key-log.js';
import { createTestDatabase, type TestDatabase } from '../_util/app.js';
import { cli } from '../cli/cli-io.js';
import {
  challenge,
  LOGIN_WITH_KEY,
  nowIso,
  signText,
  statement,
  type KeyAccount,
} from '../devices/_keys.js';
import { until } from '../realtime/_helpers.js';

import { signIn, signUpAndIn } from '../_util/seed.js';
import type { Agent } from '../_util/app.js';
import { Collected, modernClient } from '../realtime/_helpers.js';

import {
  CREATE_INVITE,
  CREATE_WORKSPACE,
  freePort,
  JOIN,
  keyUser,
  linkDevice,
  SEND,
  startPeer,
  viaRelay,
  type Peer,
} from './_fed.js';

const ME = '{ me { username } }';

describe('federation across restarts: the s2s outbox, relay quotas, server-key rotate', () => {
  let dbA: TestDatabase;
  let dbB: TestDatabase;
  let portA: number;
  let portB: number;
  let a: Peer;
  let b: Peer;
  let alice: KeyAccount;
  let bob: Agent;
  let channelId: string;
  // One request a minute per address (the test's own loopback requests exempt): relayed requests
  // are not counted against the address the host runs them from (the relay's call was counted
  // per peer), so they all pass.
  const bEnv = {
    SVC_RELAY_DEVICES_PER_USER: '2',
    SVC_RATE_REQUESTS_PER_MIN_PER_IP: '1',
    SVC_RATE_EXEMPT_ADDRESSES: '127.0.0.1',
  };

  beforeAll(async () => {
    dbA = await createTestDatabase();
    dbB = await createTestDatabase();
    portA = await freePort();
    portB = await freePort();
    a = await startPeer({ database: dbA, port: portA });
    b = await startPeer({ database: dbB, port: portB, env: bEnv });
    alice = await keyUser(a, 'alice');
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await dbA?.drop();
    await dbB?.drop();
  });

  it('a host holds a remote person to SVC_RELAY_DEVICES_PER_USER devices', async () => {
    bob = await signUpAndIn(b.t, { username: 'bob' });
    const ws = (await b.t.gql(CREATE_WORKSPACE, { name: 'Lasting' }, bob)).body.data!
      .createWorkspace;
    channelId = ws.channels[0].id;
    const token = (await b.t.gql(CREATE_INVITE, { id: ws.id }, bob)).body.data!
      .createWorkspaceInvite.token;
    expect((await viaRelay(a, alice, b.id, JOIN, { token })).json().errors).toBeUndefined();
    const phone = await linkDevice(a, alice);
    expect((await viaRelay(a, phone, b.id, ME)).status).toBe(200);
    const tablet = await linkDevice(a, alice);
    const refused = await viaRelay(a, tablet, b.id, ME);
    expect(refused.status).toBe(400);
    expect(refused.json()).toEqual({
      error: 'validation',
      message: expect.stringContaining('SVC_RELAY_DEVICES_PER_USER'),
    });
  });

  it('a revocation made while the host is down reaches it after both restart', async () => {
    const phone = await linkDevice(a, alice);
    // The host refuses a third live device (previous test), so revoke one it knows: the first
    // phone was linked there; look it up by its key on B.
    const known = await b.ctx.db.kysely
      .selectFrom('remote_device')
      .select('deviceKey')
      .where('revokedAt', 'is', null)
      .execute();
    expect(known).toHaveLength(2);
    const devices = await a.ctx.db.kysely
      .selectFrom('device')
      .select(['id', 'publicKey'])
      .where('revokedAt', 'is', null)
      .execute();
    const target = devices.find(
      (d) =>
        d.publicKey !== alice.device.publicKey && known.some((k) => k.deviceKey === d.publicKey),
    )!;
    expect(target).toBeTruthy();

    await b.stop();
    const revoked = await a.t.gql(
      'mutation($id: ID!) { revokeDevice(deviceId: $id) }',
      { id: target.id },
      phone.agent,
    );
    expect(revoked.body.errors).toBeUndefined();
    const outbox = () => a.ctx.db.kysely.selectFrom('s2s_outbox').selectAll().execute();
    await until(async () => (await outbox())[0]?.attempts === 1, 'a failed first attempt');
    expect((await outbox())[0]).toMatchObject({ serverId: b.id, path: 'revocations' });
    expect((await outbox())[0]!.lastError).toMatch(/unreachable/);

    await a.stop();
    b = await startPeer({ database: dbB, port: portB, env: bEnv });
    a = await startPeer({ database: dbA, port: portA });
    // The call is still there after the restart; make its backoff due now.
    expect(await outbox()).toHaveLength(1);
    await a.ctx.db.kysely.updateTable('s2s_outbox').set({ nextAttemptAt: 0 }).execute();
    await until(async () => (await outbox()).length === 0, 'the outbox to drain');
    const row = await b.ctx.db.kysely
      .selectFrom('remote_device')
      .select('revokedAt')
      .where('deviceKey', '=', target.publicKey)
      .executeTakeFirstOrThrow();
    expect(row.revokedAt).not.toBeNull();
  });

  it("after the host restarts, its events reach a remote person's relayStream without a request", async () => {
    const client = modernClient(`ws://127.0.0.1:${a.address.port}/api/ws`, alice.agent);
    try {
      const sub = new Collected(client, 'subscription { relayStream { type hostServerId } }');
      await until(
        async () => ((await a.ctx.metrics.wsSubscriptions.get()).values[0]?.value ?? 0) >= 1,
        'the subscription on A',
      );
      // bob signs in again on the restarted B and writes there; alice has sent nothing since.
      bob = await signIn(b.t, 'bob');
      expect(
        (await b.t.gql(SEND, { c: channelId, text: 'after the restart' }, bob)).body.errors,
      ).toBeUndefined();
      await until(
        () => sub.events('relayStream').some((e) => e.type === 'MessageCreated'),
        'the event through relayStream',
      );
      expect(sub.events('relayStream').find((e) => e.type === 'MessageCreated')).toEqual({
        type: 'MessageCreated',
        hostServerId: b.id,
      });
      sub.unsubscribe();
    } finally {
      await client.dispose();
    }
  });

  it('svc server-key rotate appends a signed entry that peers can follow', async () => {
    await a.stop();
    const env = { ...dbA.env, SVC_LOG_LEVEL: 'warn' };
    const run = await cli(['server-key', 'rotate'], env);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const rotated = JSON.parse(run.out) as { seq: number; key: string; previousKey: string };
    expect(rotated.seq).toBe(1);
    a = await startPeer({ database: dbA, port: portA });
    const doc = (await (await fetch(`${a.url}/.well-known/svc-server`)).json()) as {
      keyLog: unknown;
      descriptor: { payload: string };
    };
    expect(verifyKeyLog(doc.keyLog).keys).toEqual([rotated.previousKey, rotated.key]);
    expect(JSON.parse(doc.descriptor.payload).key).toBe(rotated.key);
    // B pinned A's first key and follows the rotation on A's next call.
    const ping = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
    expect(ping.status).toBe(200);
  });

  it('a rotation the command line makes while the server runs is taken up by the server', async () => {
    // A key-login challenge issued before the rotation, signed after it.
    const before = await challenge(a.t);
    const run = await cli(['server-key', 'rotate'], { ...dbA.env, SVC_LOG_LEVEL: 'warn' });
    expect(run.code).toBe(0);
    const rotated = JSON.parse(run.out) as { seq: number; key: string; previousKey: string };
    expect(rotated.seq).toBe(2);
    expect(before.serverKey).toBe(rotated.previousKey);
    // No request reaches A: its periodic key-log check switches the signing key.
    await until(() => a.ctx.keys.signingPublicRaw === rotated.key, 'A to use the new key');
    // Key-login challenges name the new key from then on, as the discovery document does.
    expect((await challenge(a.t)).serverKey).toBe(rotated.key);
    const doc = (await (await fetch(`${a.url}/.well-known/svc-server`)).json()) as {
      keyLog: unknown;
      descriptor: { payload: string };
    };
    expect(verifyKeyLog(doc.keyLog).keys.at(-1)).toBe(rotated.key);
    expect(JSON.parse(doc.descriptor.payload).key).toBe(rotated.key);
    // The statement over the earlier challenge names the key that challenge gave, and passes.
    const issuedAt = nowIso(a.t);
    const login = await a.t.gql(LOGIN_WITH_KEY, {
      proof: {
        challengeId: before.challengeId,
        devicePublicKey: alice.device.publicKey,
        issuedAt,
        signature: signText(
          alice.device,
          statement('login', before, issuedAt, [['device', alice.device.publicKey]]),
        ),
      },
    });
    expect(login.body.errors).toBeUndefined();
    const ping = await a.ctx.federation.client!.call(b.id, { method: 'GET', path: 'ping' });
    expect(ping.status).toBe(200);
    const pin = await b.ctx.db.kysely
      .selectFrom('s2s_peer')
      .select('currentKey')
      .where('serverId', '=', a.id)
      .executeTakeFirstOrThrow();
    expect(pin.currentKey).toBe(rotated.key);
  });
});
