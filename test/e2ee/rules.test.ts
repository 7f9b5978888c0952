import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, ManualClock } from '../../src/lib/clock.js';
import type { TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
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

// The delivery service's rules one by one (docs/e2ee.md), with real MLS clients.

const CREATE = `mutation($i: CreateConversationInput!) { createConversation(input: $i) {
  conversation { id } } }`;
const COMMIT = `mutation($i: MlsCommitInput!) { commitMlsGroup(input: $i) { epoch } }`;
const STATE = `query($c: ID!) { mlsGroupState(conversationId: $c) { epoch } }`;

describe('the MLS delivery service rules', () => {
  const clock = new ManualClock(Date.parse('2031-03-01T00:00:00Z'));
  let rt: RealtimeTestServer;
  let t: TestApp;
  let workspaceId: string;
  let owner: MlsDevice;

  /** A key account in the shared workspace with `n` key packages published. */
  const person = async (n = 2) => {
    const d = await MlsDevice.signUp(t);
    await inviteAndJoin(t, owner.agent, workspaceId, [d.agent]);
    if (n > 0) await d.publish(n);
    return d;
  };

  /** An encrypted group of `creator` and `others`, its MLS group made and joined by all. */
  const group = async (creator: MlsDevice, others: MlsDevice[]) => {
    const id = ok(
      await t.gql(
        CREATE,
        { i: { memberIds: others.map((o) => o.userId), encrypted: true } },
        creator.agent,
      ),
    ).createConversation.conversation.id as string;
    await creator.createGroup(id);
    ok(await creator.commit(id, { addUsers: others.map((o) => o.userId) }));
    for (const o of others) await o.join(id);
    return id;
  };

  beforeAll(async () => {
    rt = await startRealtime({
      clock,
      env: {
        SVC_OPEN_REGISTRATION: 'true',
        SVC_LIMIT_MESSAGE_BYTES: '100',
        SVC_RATE_MESSAGES_PER_MIN_PER_USER: '5',
        SVC_SESSION_TTL_DAYS: '365',
      },
    });
    t = rt.app;
    owner = await MlsDevice.signUp(t);
    workspaceId = (await createWorkspace(t, owner.agent, 'Rules')).id;
    await owner.publish(1);
  });
  afterAll(async () => rt?.stop());

  it('checks what a Commit claims against its MLS header, and who may commit', async () => {
    const a = await person();
    const b = await person();
    const c = ok(await t.gql(CREATE, { i: { memberIds: [b.userId], encrypted: true } }, a.agent))
      .createConversation.conversation.id as string;
    await a.createGroup(c);
    const mk = async (patch: Record<string, unknown>) => {
      // A real Commit of the group, then one field of the request changed.
      const { createCommit } = await import('ts-mls');
      const { suite } = await import('./_client.js');
      const made = await createCommit({
        state: a.groups.get(c)!.state,
        cipherSuite: await suite(),
      });
      const { encodeMlsMessage } = await import('ts-mls');
      const commit = Buffer.from(encodeMlsMessage(made.commit)).toString('base64url');
      return t.gql(
        COMMIT,
        { i: { conversationId: c, incarnation: 1, epoch: 0, commit, ...patch } },
        a.agent,
      );
    };
    expect((await mk({ epoch: 3 })).body.errors?.[0]?.message).toMatch(/another epoch/);
    expect((await mk({ incarnation: 2 })).body.errors?.[0]?.message).toMatch(/another MLS group/);
    expectCode(await mk({ commit: 'bm90IE1MUw' }), 'VALIDATION');
    expectCode(await mk({ addedDeviceIds: [owner.deviceId] }), 'VALIDATION');
    expect((await mk({ addedDeviceIds: [b.deviceId] })).body.errors?.[0]?.message).toMatch(
      /Welcome/,
    );
    // A password session (no device) cannot commit; a non-member cannot see the group.
    const pw = await signUpAndIn(t);
    await inviteAndJoin(t, owner.agent, workspaceId, [pw]);
    expectCode(await t.gql(STATE, { c }, pw), 'NOT_FOUND');
    // The declared devices must be exactly those the Welcome is for, each with a package the
    // server handed out.
    const undeclared = expectCode(
      await a.commit(c, { addUsers: [b.userId], declareAdded: [] }),
      'VALIDATION',
    );
    expect(undeclared.message).toMatch(/exactly the devices the Welcome is for/);
    const foreign = expectCode(
      await a.commit(c, {
        addKeyPackages: [await b.keyPackage()],
        declareAdded: [b.deviceId],
      }),
      'VALIDATION',
    );
    expect(foreign.message).toMatch(/did not hand out/);
    // A message is not a Commit.
    ok(await a.commit(c, { addUsers: [b.userId] }));
    await b.join(c);
    const sent = await a.send(c, 'hi');
    const asCommit = await t.gql(
      COMMIT,
      { i: { conversationId: c, incarnation: 1, epoch: 1, commit: sent.ciphertext } },
      b.agent,
    );
    expect(asCommit.body.errors?.[0]?.message).toMatch(/not a Commit/);
    // A plain conversation has no group.
    const plain = ok(await t.gql(CREATE, { i: { memberIds: [b.userId] } }, a.agent))
      .createConversation.conversation.id;
    expectCode(await t.gql(STATE, { c: plain }, a.agent), 'VALIDATION');
  });

  it('pages the Welcomes waiting for a device both ways, oldest first', async () => {
    const a = await person();
    const b = await person(3);
    const made: string[] = [];
    // Groups of three: a second conversation of the same two would be the first again.
    for (let i = 0; i < 3; i++) {
      const third = await person(1);
      const members = [b.userId, third.userId];
      const c = ok(await t.gql(CREATE, { i: { memberIds: members, encrypted: true } }, a.agent))
        .createConversation.conversation.id as string;
      await a.createGroup(c);
      ok(await a.commit(c, { addUsers: members }));
      made.push(c);
    }
    const page = async (args: string) => {
      const res = await t.gql(`{ mlsWelcomes(${args}) { id conversationId } }`, {}, b.agent);
      return res.body.errors
        ? `${res.body.errors[0]!.extensions?.code}: ${res.body.errors[0]!.message}`
        : (res.body.data!.mlsWelcomes as Array<{ id: string; conversationId: string }>);
    };
    const all = (await page('limit: 100')) as Array<{ id: string; conversationId: string }>;
    expect(all.map((w) => w.conversationId)).toEqual(made);
    const ids = all.map((w) => w.id);
    const idsOf = async (args: string) =>
      ((await page(args)) as Array<{ id: string }>).map((w) => w.id);
    expect(await idsOf('limit: 2')).toEqual(ids.slice(0, 2));
    expect(await idsOf(`after: "${ids[0]}", limit: 1`)).toEqual([ids[1]]);
    expect(await idsOf(`before: "${ids[2]}"`)).toEqual(ids.slice(0, 2));
    expect(await idsOf(`before: "${ids[2]}", limit: 1`)).toEqual([ids[1]]);
    expect(await idsOf(`before: "${ids[0]}"`)).toEqual([]);
    expect(await idsOf(`conversationId: "${made[1]}", before: "${ids[2]}"`)).toEqual([ids[1]]);
    expect(await page(`after: "${ids[0]}", before: "${ids[2]}"`)).toMatch(
      /^VALIDATION: pass at most one of after and before/,
    );
    // A Welcome that arrives after the first page shifts no cursor: it comes after the last one,
    // and the pages already read read the same again (contract, Pagination).
    const fourth = await person(1);
    const later = ok(
      await t.gql(
        CREATE,
        { i: { memberIds: [b.userId, fourth.userId], encrypted: true } },
        a.agent,
      ),
    ).createConversation.conversation.id as string;
    await a.createGroup(later);
    ok(await a.commit(later, { addUsers: [b.userId, fourth.userId] }));
    const now = (await page('limit: 100')) as Array<{ id: string; conversationId: string }>;
    expect(now.map((w) => w.conversationId)).toEqual([...made, later]);
    expect(await idsOf('limit: 2')).toEqual(ids.slice(0, 2));
    expect(await idsOf(`after: "${ids[1]}"`)).toEqual([ids[2], now[3]!.id]);
    expect(await idsOf(`before: "${ids[2]}"`)).toEqual(ids.slice(0, 2));
  });

  it('creates the group once when two members race to create it', async () => {
    const a = await person();
    const b = await person();
    const c = ok(await t.gql(CREATE, { i: { memberIds: [b.userId], encrypted: true } }, a.agent))
      .createConversation.conversation.id as string;
    await a.createGroup(c);
    await b.createGroup(c);
    const [ra, rb] = await Promise.all([
      a.commit(c, { addUsers: [b.userId] }),
      b.commit(c, { addUsers: [a.userId] }),
    ]);
    const errors = [ra, rb].map((r) => r.body.errors?.[0]?.extensions ?? null);
    expect(errors.filter((e) => e === null)).toHaveLength(1);
    expect(errors.find((e) => e !== null)).toMatchObject({
      code: 'STALE_EPOCH',
      incarnation: 1,
      epoch: 1,
    });
    // The loser was added by the winner: it joins with its Welcome and both talk.
    const [winner, loser] = ra.body.errors ? [b, a] : [a, b];
    await loser.join(c);
    const sent = await loser.send(c, 'joined after all');
    const seen = (await winner.messages(c)).find((m) => m.id === sent.id)!;
    expect((await winner.decrypt(c, seen)).text).toBe('joined after all');
  });

  it('limits ciphertext to SVC_LIMIT_MESSAGE_BYTES plus 4096 bytes, and counts it in the message rate', async () => {
    const a = await person();
    const b = await person();
    const c = await group(a, [b]);
    // Over the text limit of 100 bytes, within the framing allowance.
    ok(await a.sendRaw(c, 'x'.repeat(300)));
    const big = expectCode(await a.sendRaw(c, 'x'.repeat(5000)), 'VALIDATION');
    expect(big.message).toMatch(/4096 bytes of framing/);
    // Five messages a minute (the refused one spent nothing): four more pass, the next is refused.
    for (let i = 0; i < 4; i++) ok(await a.sendRaw(c, `n${i}`));
    const limited = expectCode(await a.sendRaw(c, 'one too many'), 'RATE_LIMITED');
    expect(limited.extensions?.retryAfterSeconds).toBeGreaterThan(0);
    clock.advance(60_000);
  });

  it('delivers Commits over the WebSocket in order, and a member who left must be removed', async () => {
    const a = await person();
    const b = await person();
    const c3 = await person();
    const c = await group(a, [b, c3]);
    const client = modernClient(rt.wsUrl, b.agent);
    const stream = new Collected(client, RELAY_STREAM);
    await until(async () => (await rt.subscriptions()) >= 1, 'the subscription');
    ok(await a.commit(c));
    ok(await a.commit(c));
    const commits = () =>
      stream
        .events('relayStream')
        .filter((e) => e.type === 'MlsCommitAdded')
        .map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload));
    await until(() => commits().length >= 2, 'two Commits on the socket');
    expect(commits().map((p) => p.epoch)).toEqual([1, 2]);
    for (const p of commits()) await b.applyCommit(c, p.commit);
    expect(b.epochOf(c)).toBe(3);
    stream.unsubscribe();
    await client.dispose();

    ok(await t.gql('mutation($c: ID!) { leaveConversation(conversationId: $c) }', { c }, c3.agent));
    const refused = expectCode(await a.sendRaw(c, 'still there?'), 'MLS_COMMIT_REQUIRED');
    expect(refused.extensions?.reason).toBe('pendingRemovals');
    await a.catchUp(c);
    ok(await a.commit(c, { removeDeviceIds: [c3.deviceId] }));
    await b.catchUp(c);
    const sent = await a.send(c, 'just us');
    const seen = (await b.messages(c)).find((m) => m.id === sent.id)!;
    expect((await b.decrypt(c, seen)).text).toBe('just us');
  });

  it('keeps a purged account as author of its encrypted messages until a Commit removes its device', async () => {
    const a = await person();
    const b = await person();
    const c = await group(a, [b]);
    const sent = await b.send(c, 'before I go');
    ok(
      await t.gql(
        'mutation($u: String!) { requestAccountDeletion(input: { confirmUsername: $u }) { scheduledFor } }',
        { u: b.account!.username },
        b.agent,
      ),
    );
    clock.advance(14 * DAY_MS + 1);
    await t.ctx.scheduler.runOnce('account-purge');
    const listed = (await a.messages(c)).find((m) => m.id === sent.id)!;
    expect((await a.decrypt(c, listed)).text).toBe('before I go');
    const row = await t.ctx.db.kysely
      .selectFrom('message')
      .select(['authorId', 'deletedAt'])
      .where('id', '=', sent.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ authorId: b.userId, deletedAt: null });
    const refused = expectCode(await a.sendRaw(c, 'hello?'), 'MLS_COMMIT_REQUIRED');
    expect(refused.extensions?.reason).toBe('pendingRemovals');
    ok(await a.commit(c, { removeDeviceIds: [b.deviceId] }));
    ok(await a.sendRaw(c, 'alone now'));
  });

  it('starts the next incarnation once every device in the group must leave it', async () => {
    const a = await person();
    const b = await person();
    const c3 = await person();
    const c = await group(a, [b, c3]);
    const phone = await a.linkDevice();
    await phone.publish(1);
    // While the group has a device that may stay, no new incarnation.
    await phone.createGroup(c, 2);
    const early = expectCode(await phone.commit(c), 'STALE_EPOCH');
    expect(early.extensions).toMatchObject({ incarnation: 1, epoch: 1 });

    for (const who of [b, c3]) {
      ok(
        await t.gql(
          'mutation($c: ID!) { leaveConversation(conversationId: $c) }',
          { c },
          who.agent,
        ),
      );
    }
    ok(
      await t.gql(
        'mutation($d: ID!) { revokeDevice(deviceId: $d) }',
        { d: a.deviceId },
        phone.agent,
      ),
    );
    expect(await phone.groupState(c)).toMatchObject({ incarnation: 1, orphaned: true });
    expect(expectCode(await phone.sendRaw(c, 'x'), 'MLS_COMMIT_REQUIRED').extensions?.reason).toBe(
      'pendingRemovals',
    );
    await phone.createGroup(c, 2);
    ok(await phone.commit(c));
    expect(await phone.groupState(c)).toMatchObject({
      incarnation: 2,
      epoch: 1,
      deviceIds: [phone.deviceId],
      orphaned: false,
    });
    const sent = await phone.send(c, 'a fresh start');
    expect(sent.mls).toMatchObject({ incarnation: 2, epoch: 1 });
  });

  it('replies in threads and deletes like any message; a deleted one keeps no ciphertext', async () => {
    const a = await person();
    const b = await person();
    const c = await group(a, [b]);
    const root = await a.send(c, 'root');
    const reply = ok(
      await b.sendRaw(c, 'in the thread', { threadRootId: root.id }),
    ).sendEncryptedMessage;
    const replies = ok(
      await t.gql(
        'query($m: ID!) { threadReplies(messageId: $m) { items { id ciphertext mls { epoch } } } }',
        { m: root.id },
        a.agent,
      ),
    ).threadReplies.items;
    expect(replies).toEqual([{ id: reply.id, ciphertext: reply.ciphertext, mls: { epoch: 1 } }]);
    expect((await a.decrypt(c, { ...replies[0], mls: reply.mls })).text).toBe('in the thread');
    expectCode(
      await t.gql(
        'mutation($m: ID!) { editMessage(messageId: $m, text: "x") { id } }',
        { m: reply.id },
        b.agent,
      ),
      'VALIDATION',
    );
    const deleted = ok(
      await t.gql(
        'mutation($m: ID!) { deleteMessage(messageId: $m) { isDeleted ciphertext mls { epoch } } }',
        { m: reply.id },
        b.agent,
      ),
    ).deleteMessage;
    expect(deleted).toEqual({ isDeleted: true, ciphertext: null, mls: null });
  });

  it('answers malformed MLS input with VALIDATION, never INTERNAL', async () => {
    const a = await person();
    const b = await person();
    const c = await group(a, [b]);
    const { randomBytes } = await import('node:crypto');
    const junk = [
      '',
      '!!',
      randomBytes(64).toString('base64url'),
      Buffer.from([0, 1, 0, 5]).toString('base64url'),
      Buffer.from([0, 1, 0, 1, 0, 0]).toString('base64url'),
      // A real key package, but not this device's, nor a Commit, Welcome or message.
      await a.keyPackage({ identity: 'someone else' }),
    ];
    for (const v of junk) {
      for (const res of [
        await a.publishRaw({ k: v }),
        await t.gql(
          COMMIT,
          { i: { conversationId: c, incarnation: 1, epoch: 1, commit: v } },
          a.agent,
        ),
        await t.gql(
          COMMIT,
          { i: { conversationId: c, incarnation: 1, epoch: 1, commit: v, welcome: v } },
          a.agent,
        ),
        await t.gql(
          `mutation($i: SendEncryptedMessageInput!) { sendEncryptedMessage(input: $i) { id } }`,
          {
            i: {
              conversationId: c,
              incarnation: 1,
              epoch: 1,
              ciphertext: v,
              frankingCommitment: Buffer.alloc(32).toString('base64url'),
            },
          },
          a.agent,
        ),
      ]) {
        const code = res.body.errors?.[0]?.extensions?.code;
        expect(code, JSON.stringify(res.body)).toBe('VALIDATION');
      }
    }
    expectCode(
      await t.gql(
        COMMIT,
        { i: { conversationId: c, incarnation: -1, epoch: 0, commit: 'AA' } },
        a.agent,
      ),
      'VALIDATION',
    );
  });

  it('prunes key packages that are claimed for a week, expired, or of a revoked device', async () => {
    const a = await person(1);
    const b = await person(3);
    const c = ok(await t.gql(CREATE, { i: { memberIds: [b.userId], encrypted: true } }, a.agent))
      .createConversation.conversation.id;
    const count = async () =>
      Number(
        (
          await t.ctx.db.kysely
            .selectFrom('mls_key_package')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('deviceId', '=', b.deviceId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    // Three single-use packages and a last-resort one; one is claimed.
    await a.claim(c, b.userId);
    expect(await count()).toBe(4);
    await t.ctx.scheduler.runOnce('mls-key-package-prune');
    expect(await count()).toBe(4);
    clock.advance(8 * DAY_MS);
    await t.ctx.scheduler.runOnce('mls-key-package-prune');
    expect(await count()).toBe(3);
    const phone = await b.linkDevice();
    ok(
      await t.gql(
        'mutation($d: ID!) { revokeDevice(deviceId: $d) }',
        { d: b.deviceId },
        phone.agent,
      ),
    );
    await t.ctx.scheduler.runOnce('mls-key-package-prune');
    expect(await count()).toBe(0);
  });

  it('keeps invitees and strangers out of the group', async () => {
    const a = await person();
    const b = await person();
    const other = await person();
    const invitee = await person(0);
    const c = await group(a, [b, other]);
    ok(
      await t.gql(
        `mutation($i: AddConversationMembersInput!) { addConversationMembers(input: $i) { id } }`,
        { i: { conversationId: c, memberIds: [invitee.userId] } },
        a.agent,
      ),
    );
    expectCode(await t.gql(STATE, { c }, invitee.agent), 'FORBIDDEN');
    expectCode(
      await t.gql(
        'mutation($c: ID!, $u: ID!) { claimKeyPackages(conversationId: $c, userId: $u) { deviceId } }',
        { c, u: invitee.userId },
        a.agent,
      ),
      'NOT_FOUND',
    );
    const stranger = await person();
    expectCode(await t.gql(STATE, { c }, stranger.agent), 'NOT_FOUND');
    expect(ok(await t.gql('{ mlsWelcomes { id } }', {}, stranger.agent)).mlsWelcomes).toEqual([]);
  });
});
