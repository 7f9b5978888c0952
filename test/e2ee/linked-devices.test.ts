import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { BusEvent } from '../../src/events/bus.js';
import { userTopic } from '../../src/events/catalog.js';
import type { TestApp } from '../_util/app.js';
import { createWorkspace, inviteAndJoin } from '../conversations/_helpers.js';
import { startRealtime, until, type RealtimeTestServer } from '../realtime/_helpers.js';

import { MlsDevice, ok } from './_client.js';

// A device linked after its account joined an encrypted conversation (docs/e2ee.md, "Who is in
// the group"): the server lists it in `mlsGroupState.pendingAdditions` and tells the members
// with `MlsMembershipChanged`, a member's device adds it, and it reads what comes after.

const CREATE = `mutation($i: CreateConversationInput!) { createConversation(input: $i) {
  conversation { id } } }`;
const STATE = `query($c: ID!) { mlsGroupState(conversationId: $c) { deviceIds
  pendingAdditions { deviceId userId } } }`;

describe('a newly linked device of a member', () => {
  let rt: RealtimeTestServer;
  let t: TestApp;
  let alice: MlsDevice, bob: MlsDevice;
  let conv: string;

  beforeAll(async () => {
    rt = await startRealtime({ env: { SVC_OPEN_REGISTRATION: 'true' } });
    t = rt.app;
    alice = await MlsDevice.signUp(t);
    bob = await MlsDevice.signUp(t);
    const ws = await createWorkspace(t, alice.agent, 'Linked');
    await inviteAndJoin(t, alice.agent, ws.id, [bob.agent]);
    await alice.publish(2);
    await bob.publish(2);
    conv = ok(await t.gql(CREATE, { i: { memberIds: [bob.userId], encrypted: true } }, alice.agent))
      .createConversation.conversation.id;
  });
  afterAll(async () => rt?.stop());

  const state = async (d: MlsDevice) =>
    ok(await t.gql(STATE, { c: conv }, d.agent)).mlsGroupState as {
      deviceIds: string[];
      pendingAdditions: Array<{ deviceId: string; userId: string }>;
    };

  it('lists nothing to add before the group exists, nor once everyone is in it', async () => {
    expect((await state(alice)).pendingAdditions).toEqual([]);
    await alice.createGroup(conv);
    ok(await alice.commit(conv, { addUsers: [bob.userId] }));
    await bob.join(conv);
    expect((await state(alice)).pendingAdditions).toEqual([]);
  });

  it('lists a linked device once it is set up, tells the members, and is added by a Commit', async () => {
    const phone = await bob.linkDevice();
    // Linked but without key packages: nothing can add it yet.
    expect((await state(alice)).pendingAdditions).toEqual([]);

    const toldAlice: BusEvent[] = [];
    const toldBob: BusEvent[] = [];
    const stops = [
      rt.server.ctx.bus.subscribe(userTopic(alice.userId), (e) => toldAlice.push(e)),
      rt.server.ctx.bus.subscribe(userTopic(bob.userId), (e) => toldBob.push(e)),
    ];
    await phone.publish(2);
    const changed = (told: BusEvent[]) => told.filter((e) => e.type === 'MlsMembershipChanged');
    await until(() => changed(toldAlice).length > 0, 'MlsMembershipChanged to Alice');
    await until(() => changed(toldBob).length > 0, 'MlsMembershipChanged to Bob');
    expect(changed(toldAlice)[0]!.payload).toMatchObject({
      conversationId: conv,
      added: [bob.userId],
      removed: [],
    });
    expect((await state(alice)).pendingAdditions).toEqual([
      { deviceId: phone.deviceId, userId: bob.userId },
    ]);

    // Publishing again is no news: only a device's first key packages are announced.
    const before = changed(toldAlice).length;
    await phone.publish(1, false);
    // A later event on the same topic shows the second publish had its chance to emit.
    ok(await alice.commit(conv, { addUsers: [bob.userId] }));
    await until(() => toldAlice.some((e) => e.type === 'MlsCommitAdded'), 'the Commit event');
    expect(changed(toldAlice).length).toBe(before);
    for (const stop of stops) stop();

    // Alice's Commit added the phone: listed no more, and it reads what comes after.
    const after = await state(alice);
    expect(after.pendingAdditions).toEqual([]);
    expect(after.deviceIds).toContain(phone.deviceId);
    await phone.join(conv);
    await bob.catchUp(conv);
    const sent = await alice.send(conv, 'hello to both of your devices');
    const seen = (await phone.messages(conv)).find((m) => m.id === sent.id)!;
    expect((await phone.decrypt(conv, seen)).text).toBe('hello to both of your devices');
  });

  it('does not list a revoked device', async () => {
    const tablet = await bob.linkDevice();
    await tablet.publish(1);
    expect((await state(alice)).pendingAdditions.map((p) => p.deviceId)).toEqual([tablet.deviceId]);
    ok(
      await t.gql(
        'mutation($d: ID!) { revokeDevice(deviceId: $d) }',
        { d: tablet.deviceId },
        bob.agent,
      ),
    );
    expect((await state(alice)).pendingAdditions).toEqual([]);
  });
});
