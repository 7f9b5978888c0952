import { createHash, randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import type { BusEvent } from '../../src/events/bus.js';
import { userTopic } from '../../src/events/catalog.js';
import { agentHeaders, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { multipart } from '../files/_image-upload.js';
import { createWorkspace, expectCode, inviteAndJoin } from '../conversations/_helpers.js';
import {
  Collected,
  modernClient,
  RELAY_STREAM,
  startRealtime,
  until,
  type RealtimeTestServer,
} from '../realtime/_helpers.js';

import { MlsDevice, ok } from './_client.js';

// Encrypted conversations end to end: real MLS clients (ts-mls) on a real server, over HTTP and
// the WebSocket (docs/e2ee.md).

const CREATE = `mutation($i: CreateConversationInput!) { createConversation(input: $i) {
  conversation { id memberIds pendingMemberIds mlsGroup } } }`;
const ADD = `mutation($i: AddConversationMembersInput!) { addConversationMembers(input: $i) {
  memberIds pendingMemberIds } }`;
const ACCEPT = `mutation($s: ID!, $c: ID!) { acceptConversationInvite(serverId: $s, conversationId: $c) {
  isMember mlsGroup } }`;
const REPORT = `mutation($m: ID!, $r: FrankingRevealInput) { reportMessage(messageId: $m,
  category: HARASSMENT, reveal: $r) { id snapshot { text encrypted frankingVerified } } }`;

describe('encrypted conversations with real MLS clients', () => {
  let rt: RealtimeTestServer;
  let t: TestApp;
  let alice: MlsDevice, bob: MlsDevice, carol: MlsDevice, dave: MlsDevice;
  let conv: string;
  let workspaceId: string;

  beforeAll(async () => {
    rt = await startRealtime({ env: { SVC_OPEN_REGISTRATION: 'true' } });
    t = rt.app;
    alice = await MlsDevice.signUp(t);
    bob = await MlsDevice.signUp(t);
    carol = await MlsDevice.signUp(t);
    dave = await MlsDevice.signUp(t);
    const ws = await createWorkspace(t, alice.agent, 'Crypto');
    workspaceId = ws.id;
    await inviteAndJoin(t, alice.agent, ws.id, [bob.agent, carol.agent, dave.agent]);
  });
  afterAll(async () => rt?.stop());

  it('validates key packages: MLS, the device key identity, the suite, not expired', async () => {
    const published = await alice.publish(3);
    expect(published).toMatchObject({
      encryptionReady: true,
      keyPackagesAvailable: 3,
      keyPackagesLow: true,
    });
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ k: 'bm90IGFuIE1MUyBtZXNzYWdl' }, /not an MLS message/],
      [{ k: await alice.keyPackage({ identity: `kid_other:${alice.deviceId}` }) }, /key identity/],
      [{ k: await alice.keyPackage({ lifetime: { notBefore: 0n, notAfter: 1000n } }) }, /expired/],
      [{}, /pass keyPackage/],
    ];
    for (const [input, message] of bad) {
      const err = expectCode(await alice.publishRaw(input), 'VALIDATION');
      expect(err.message).toMatch(message);
    }
    // Only the device itself publishes.
    expectCode(
      await t.gql(
        'mutation($d: ID!, $k: String) { publishKeyPackage(deviceId: $d, keyPackage: $k) { id } }',
        { d: bob.deviceId, k: await bob.keyPackage() },
        alice.agent,
      ),
      'NOT_FOUND',
    );
    await bob.publish(2);
    await carol.publish(2);
  });

  it('creates the group with a Commit, delivers Welcomes, and carries ciphertext over HTTP and the WebSocket', async () => {
    conv = ok(
      await t.gql(
        CREATE,
        { i: { memberIds: [bob.userId, carol.userId], encrypted: true } },
        alice.agent,
      ),
    ).createConversation.conversation.id;

    // No group yet: messages wait for the first Commit.
    await alice.createGroup(conv);
    const early = expectCode(await alice.sendRaw(conv, 'too early'), 'MLS_COMMIT_REQUIRED');
    expect(early.extensions?.reason).toBe('noGroup');
    expect(await alice.groupState(conv)).toMatchObject({ incarnation: 0, epoch: 0, deviceIds: [] });

    const told: BusEvent[] = [];
    const stop = rt.server.ctx.bus.subscribe(userTopic(carol.userId), (e) => told.push(e));
    ok(await alice.commit(conv, { addUsers: [bob.userId, carol.userId] }));
    await until(() => told.some((e) => e.type === 'MlsWelcomeAvailable'), 'the Welcome event');
    expect(told.find((e) => e.type === 'MlsWelcomeAvailable')!.payload).toMatchObject({
      conversationId: conv,
      incarnation: 1,
      epoch: 1,
    });
    expect(told.find((e) => e.type === 'MlsCommitAdded')!.payload).toMatchObject({
      epoch: 0,
      committedBy: alice.userId,
      deviceId: alice.deviceId,
    });
    stop();
    const state = await alice.groupState(conv);
    expect(state).toMatchObject({ incarnation: 1, epoch: 1, pendingRemovalDeviceIds: [] });
    expect([...state.deviceIds].sort()).toEqual(
      [alice.deviceId, bob.deviceId, carol.deviceId].sort(),
    );
    await bob.join(conv);
    await carol.join(conv);

    // Carol listens on the WebSocket.
    const client = modernClient(rt.wsUrl, carol.agent);
    const stream = new Collected(client, RELAY_STREAM);
    await until(async () => (await rt.subscriptions()) >= 1, 'the subscription');

    const sent = await alice.send(conv, 'hello, group');
    expect(sent).toMatchObject({ text: null, mls: { incarnation: 1, epoch: 1 } });
    expect(sent.ciphertext).not.toContain('hello');

    const [listed] = await bob.messages(conv);
    expect(listed!.id).toBe(sent.id);
    expect((await bob.decrypt(conv, listed!)).text).toBe('hello, group');

    await until(
      () => stream.events('relayStream').some((e) => e.type === 'MessageCreated'),
      'MessageCreated on the socket',
    );
    const event = stream.events('relayStream').find((e) => e.type === 'MessageCreated')!;
    const payload = typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload;
    expect((await carol.decrypt(conv, payload.message)).text).toBe('hello, group');
    stream.unsubscribe();
    await client.dispose();

    // Bob is told by metadata only (docs/notifications.md): a message arrived, never its content.
    await rt.server.ctx.services.notifications.settled();
    const feed = ok(
      await t.gql(
        '{ notifications { items { kind encrypted messageId message { text ciphertext } } } }',
        {},
        bob.agent,
      ),
    ).notifications.items as Array<Record<string, any>>;
    const notified = feed.find((n) => n.messageId === sent.id);
    expect(notified).toMatchObject({ encrypted: true, message: { text: null } });
    expect(JSON.stringify(notified)).not.toContain('hello');
  });

  it('accepts exactly one of two racing Commits; the other fetches, applies and retries', async () => {
    const [b, c] = await Promise.all([bob.commit(conv), carol.commit(conv)]);
    const results = [b, c].map((r) => r.body.errors?.[0]?.extensions ?? null);
    expect(results.filter((r) => r === null)).toHaveLength(1);
    const lost = results.find((r) => r !== null)!;
    expect(lost).toMatchObject({ code: 'STALE_EPOCH', incarnation: 1, epoch: 2 });
    const [winner, loser] = b.body.errors ? [carol, bob] : [bob, carol];
    await loser.catchUp(conv);
    expect(loser.epochOf(conv)).toBe(2);
    ok(await loser.commit(conv));

    // Alice is two Commits behind: her message is refused until she catches up.
    const stale = expectCode(await alice.sendRaw(conv, 'from the past'), 'STALE_EPOCH');
    expect(stale.extensions).toMatchObject({ incarnation: 1, epoch: 3 });
    await alice.catchUp(conv, 1);
    expect(alice.epochOf(conv)).toBe(3);
    const sent = await alice.send(conv, 'caught up');
    await winner.catchUp(conv);
    const mine = (await winner.messages(conv)).find((m) => m.id === sent.id)!;
    expect((await winner.decrypt(conv, mine)).text).toBe('caught up');
    await loser.catchUp(conv);
  });

  it('hands out single-use key packages once, then the last-resort one', async () => {
    // One single-use package: the first claim takes it, then the last resort repeats.
    const d = await MlsDevice.signUp(t);
    await inviteAndJoin(t, alice.agent, workspaceId, [d.agent]);
    await d.publish(1);
    const other = ok(
      await t.gql(CREATE, { i: { memberIds: [d.userId], encrypted: true } }, alice.agent),
    ).createConversation.conversation.id;
    const told: BusEvent[] = [];
    const stop = rt.server.ctx.bus.subscribe(userTopic(d.userId), (e) => told.push(e));
    const first = await alice.claim(other, d.userId);
    const second = await alice.claim(other, d.userId);
    const third = await alice.claim(other, d.userId);
    expect(first).toEqual([expect.objectContaining({ deviceId: d.deviceId, lastResort: false })]);
    expect(second).toEqual([expect.objectContaining({ lastResort: true })]);
    expect(third[0]!.keyPackage).toBe(second[0]!.keyPackage);
    expect(second[0]!.keyPackage).not.toBe(first[0]!.keyPackage);
    const devices = ok(
      await t.gql('{ myDevices { keyPackagesAvailable keyPackagesLow } }', {}, d.agent),
    ).myDevices;
    expect(devices).toEqual([{ keyPackagesAvailable: 0, keyPackagesLow: true }]);
    // Told once, when the claim took a single-use package and left it below the mark.
    await until(() => told.some((e) => e.type === 'MlsKeyPackagesLow'), 'MlsKeyPackagesLow');
    const low = told.filter((e) => e.type === 'MlsKeyPackagesLow');
    expect(low.map((e) => e.payload)).toEqual([
      expect.objectContaining({ deviceId: d.deviceId, remaining: 0 }),
    ]);
    stop();
  });

  it('refuses messages while a revoked device is in the group, until a Commit removes it', async () => {
    // Bob links a second device, which joins the group.
    const bobPhone = await bob.linkDevice();
    await bobPhone.publish(1);
    ok(await alice.commit(conv, { addUsers: [bob.userId] }));
    await bobPhone.join(conv);
    for (const d of [bob, carol]) await d.catchUp(conv);

    ok(
      await t.gql(
        'mutation($d: ID!) { revokeDevice(deviceId: $d) }',
        { d: bobPhone.deviceId },
        bob.agent,
      ),
    );
    const refused = expectCode(await carol.sendRaw(conv, 'anyone there?'), 'MLS_COMMIT_REQUIRED');
    expect(refused.extensions?.reason).toBe('pendingRemovals');
    expect((await carol.groupState(conv)).pendingRemovalDeviceIds).toEqual([bobPhone.deviceId]);
    ok(await carol.commit(conv, { removeDeviceIds: [bobPhone.deviceId] }));
    expect((await carol.groupState(conv)).pendingRemovalDeviceIds).toEqual([]);
    const sent = await carol.send(conv, 'only the three of us');
    await bob.catchUp(conv);
    const seen = (await bob.messages(conv)).find((m) => m.id === sent.id)!;
    expect((await bob.decrypt(conv, seen)).text).toBe('only the three of us');
    await alice.catchUp(conv);
  });

  it('an invitee accepts, is added by a member device, and cannot decrypt what came before', async () => {
    const before = await alice.send(conv, 'before dave');
    const added = ok(
      await t.gql(ADD, { i: { conversationId: conv, memberIds: [dave.userId] } }, alice.agent),
    ).addConversationMembers;
    expect(added.pendingMemberIds).toEqual([dave.userId]);
    expectCode(await t.gql(ACCEPT, { s: DIRECT_SPACE_ID, c: conv }, dave.agent), 'VALIDATION');
    await dave.publish(2);
    expect(
      ok(await t.gql(ACCEPT, { s: DIRECT_SPACE_ID, c: conv }, dave.agent)).acceptConversationInvite,
    ).toMatchObject({ isMember: true, mlsGroup: conv });
    ok(await alice.commit(conv, { addUsers: [dave.userId] }));
    await dave.join(conv);
    const history = (await dave.messages(conv)).find((m) => m.id === before.id)!;
    await expect(dave.decrypt(conv, history)).rejects.toThrow();
    const after = await alice.send(conv, 'welcome, dave');
    const fresh = (await dave.messages(conv)).find((m) => m.id === after.id)!;
    expect((await dave.decrypt(conv, fresh)).text).toBe('welcome, dave');
    for (const d of [bob, carol]) await d.catchUp(conv);
  });

  it('a report with a real franking reveal passes; a tampered one and a lying sender do not', async () => {
    const sent = await alice.send(conv, 'a rude remark');
    const seen = (await bob.messages(conv)).find((m) => m.id === sent.id)!;
    const opened = await bob.decrypt(conv, seen);
    for (const reveal of [
      { plaintext: opened.body.replace('rude', 'kind'), opening: opened.opening },
      { plaintext: opened.body, opening: Buffer.alloc(32).toString('base64url') },
      // The same HMAC key once zero-padded, yet not the opening the sender committed with.
      {
        plaintext: opened.body,
        opening: Buffer.concat([
          Buffer.from(opened.opening, 'base64url'),
          Buffer.alloc(1),
        ]).toString('base64url'),
      },
    ]) {
      const err = expectCode(
        await t.gql(REPORT, { m: sent.id, r: reveal }, bob.agent),
        'VALIDATION',
      );
      expect(err.message).toMatch(/do not match/);
    }
    expectCode(await t.gql(REPORT, { m: sent.id }, bob.agent), 'VALIDATION');
    const report = ok(
      await t.gql(
        REPORT,
        { m: sent.id, r: { plaintext: opened.body, opening: opened.opening } },
        bob.agent,
      ),
    ).reportMessage;
    expect(report.snapshot).toEqual({
      text: opened.body,
      encrypted: true,
      frankingVerified: true,
    });

    // A sender whose commitment does not open gets its message dropped by every recipient.
    const lying = ok(
      await alice.sendRaw(conv, 'unreportable', { commitmentOverride: Buffer.alloc(32, 7) }),
    ).sendEncryptedMessage;
    await carol.catchUp(conv);
    const got = (await carol.messages(conv)).find((m) => m.id === lying.id)!;
    await expect(carol.decrypt(conv, got)).rejects.toThrow(/does not open/);
  });
});

describe('encrypted attachments of a reported message', () => {
  let rt: RealtimeTestServer;
  afterAll(async () => rt?.stop());

  it('uploads as octet-stream, downloads as encrypted.bin, and reaches the operators of the report only', async () => {
    rt = await startRealtime({ env: { SVC_OPEN_REGISTRATION: 'true' } });
    const t = rt.app;
    const inject = rt.server.app.inject.bind(rt.server.app);
    const alice = await MlsDevice.signUp(t);
    const bob = await MlsDevice.signUp(t);
    const operator = await signUpAndIn(t, { operator: true });
    const ws = await createWorkspace(t, alice.agent, 'Files');
    await inviteAndJoin(t, alice.agent, ws.id, [bob.agent]);
    await bob.publish(1);
    await alice.publish(1);
    const c = ok(
      await t.gql(CREATE, { i: { memberIds: [bob.userId], encrypted: true } }, alice.agent),
    ).createConversation.conversation.id;
    await alice.createGroup(c);
    ok(await alice.commit(c, { addUsers: [bob.userId] }));
    await bob.join(c);

    const blob = randomBytes(2048);
    const created = ok(
      await t.gql(
        'mutation($i: CreateAttachmentInput!) { createAttachment(input: $i) { attachmentId uploadToken } }',
        { i: { conversationId: c, fileName: 'secret.png' } },
        alice.agent,
      ),
    ).createAttachment;
    const { body, contentType } = multipart([
      { name: 'upload_token', value: created.uploadToken },
      { name: 'attachment_id', value: created.attachmentId },
      { name: 'file', filename: 'blob', type: 'application/octet-stream', bytes: blob },
    ]);
    const up = await inject({
      method: 'POST',
      url: '/api/files/upload',
      headers: { 'content-type': contentType, ...agentHeaders(alice.agent) },
      payload: body,
    });
    expect(up.statusCode, up.body).toBe(200);
    const sent = await alice.send(c, 'see the file');
    ok(
      await t.gql(
        'mutation($i: FinalizeAttachmentInput!) { finalizeAttachment(input: $i) { id } }',
        { i: { attachmentId: created.attachmentId, messageId: sent.id } },
        alice.agent,
      ),
    );
    const down = await inject({
      method: 'GET',
      url: `/api/attachments/${created.attachmentId}/download`,
      headers: agentHeaders(bob.agent),
    });
    expect(down.statusCode).toBe(200);
    expect(down.headers['content-type']).toBe('application/octet-stream');
    expect(down.headers['content-disposition']).toContain('encrypted.bin');

    const seen = (await bob.messages(c)).find((m) => m.id === sent.id)!;
    const opened = await bob.decrypt(c, seen);
    const report = ok(
      await t.gql(
        REPORT,
        { m: sent.id, r: { plaintext: opened.body, opening: opened.opening } },
        bob.agent,
      ),
    ).reportMessage;
    const sha = createHash('sha256').update(blob).digest('base64url');
    const url = `/api/reports/${report.id}/attachments/${sha}`;
    const got = await inject({ method: 'GET', url, headers: agentHeaders(operator) });
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(blob)).toBe(true);
    expect(got.headers['content-disposition']).toContain('encrypted.bin');
    for (const who of [bob.agent, alice.agent]) {
      expect((await inject({ method: 'GET', url, headers: agentHeaders(who) })).statusCode).toBe(
        404,
      );
    }
    const other = createHash('sha256').update('other').digest('base64url');
    const missing = await inject({
      method: 'GET',
      url: `/api/reports/${report.id}/attachments/${other}`,
      headers: agentHeaders(operator),
    });
    expect(missing.statusCode).toBe(404);
    expect((await inject({ method: 'GET', url })).statusCode).toBe(401);
  });
});
