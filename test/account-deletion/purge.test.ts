import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signUpAndIn } from '../_util/seed.js';
import { expectCode, ok } from '../accounts/_helpers.js';
import {
  LOGIN_WITH_KEY,
  loginProof,
  SIGNUP_WITH_KEY,
  signUpWithKey,
  signupInput,
} from '../devices/_keys.js';

import { accountRow, channel, member, message, workspace } from './_fixtures.js';

const REQUEST = `mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }`;
const LOGIN = `mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }`;

async function requestDeletion(t: TestApp, agent: Agent) {
  ok(await t.gql(REQUEST, { c: agent.username }, agent));
}

const purge = (t: TestApp) => t.ctx.scheduler.runOnce('account-purge');

describe('the account purge', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2030, 0, 1));

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { SVC_OPEN_REGISTRATION: 'true' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('waits for the grace period, then leaves a tombstone that cannot sign in', async () => {
    const doomed = await signUpWithKey(t);
    const pwUser = await signUpAndIn(t, { email: `pw${Date.now()}@example.org` });
    await requestDeletion(t, doomed.agent);
    await requestDeletion(t, pwUser);

    clock.advance(14 * DAY_MS - HOUR_MS);
    expect(await purge(t)).toBe(true);
    expect((await accountRow(t, doomed.agent.id)).deletedAt).toBeNull();
    ok(await t.gql('{ me { id } }', {}, doomed.agent));

    const ended: Array<[string[], string]> = [];
    const off = t.ctx.services.sessions.onEnded((ids, reason) => ended.push([ids, reason]));
    clock.advance(HOUR_MS);
    try {
      expect(await purge(t)).toBe(true);
    } finally {
      off();
    }
    expect(ended.map(([, r]) => r)).toEqual(['account_purged', 'account_purged']);

    const row = await accountRow(t, doomed.agent.id);
    expect(row).toMatchObject({
      username: `deleted-${doomed.agent.id.slice(0, 8)}`,
      displayName: 'Deleted account',
      email: null,
      emailKey: null,
      passwordHash: null,
      deletedAt: clock.now().getTime(),
    });
    expect(row.keyIdentityId).toMatch(/^kid_/);
    const pwRow = await accountRow(t, pwUser.id);
    expect(pwRow).toMatchObject({
      email: null,
      passwordHash: null,
      displayName: 'Deleted account',
    });

    // No sessions, devices or keys are left.
    for (const table of ['session', 'device'] as const) {
      const rows = await t.ctx.db.kysely
        .selectFrom(table)
        .select('id')
        .where('accountId', 'in', [doomed.agent.id, pwUser.id])
        .execute();
      expect(rows, table).toEqual([]);
    }
    const identities = await t.ctx.db.kysely
      .selectFrom('key_identity')
      .select(['id', 'publicKey'])
      .where('accountId', '=', doomed.agent.id)
      .execute();
    expect(identities).toEqual([{ id: row.keyIdentityId, publicKey: null }]);

    // It cannot sign in in any way.
    expectCode(await t.gql('{ me { id } }', {}, doomed.agent), 'UNAUTHENTICATED');
    expectCode(await t.gql('{ me { id } }', {}, pwUser), 'UNAUTHENTICATED');
    expectCode(
      await t.gql(LOGIN_WITH_KEY, { proof: await loginProof(t, doomed.device) }),
      'UNAUTHENTICATED',
    );
    expectCode(await t.gql(LOGIN, { u: pwUser.username, p: DEFAULT_PASSWORD }), 'UNAUTHENTICATED');
    expectCode(await t.gql(LOGIN, { u: row.username, p: DEFAULT_PASSWORD }), 'UNAUTHENTICATED');

    // The username is free again, the key identity never comes back.
    await signUpWithKey(t, { username: doomed.username });
    const again = await signupInput(t, { identity: doomed.identity });
    const res = await t.gql(SIGNUP_WITH_KEY, { input: again.input });
    expectCode(res, 'VALIDATION');
    expect(res.body.errors![0]!.message).toMatch(/deleted account/);
  });

  it('removes memberships, reactions and settings; deletes a workspace it alone belonged to', async () => {
    const doomed = await signUpAndIn(t);
    const friend = await signUpAndIn(t);
    const solo = await workspace(t, doomed.id, 'Solo');
    const soloChannel = await channel(t, solo, doomed.id);
    await message(t, soloChannel, solo, doomed.id);
    const shared = await workspace(t, friend.id, 'Shared');
    await member(t, shared, doomed.id);
    const general = await channel(t, shared, friend.id);
    const theirs = await message(t, general, shared, friend.id, { text: 'from a friend' });
    const db = t.ctx.db.kysely;
    await db
      .insertInto('reaction')
      .values({ messageId: theirs, accountId: doomed.id, emoji: '👍', createdAt: 1 })
      .execute();
    await db
      .insertInto('reaction')
      .values({ messageId: theirs, accountId: friend.id, emoji: '👍', createdAt: 1 })
      .execute();
    await db
      .insertInto('conversation_member')
      .values({
        conversationId: general,
        accountId: doomed.id,
        state: 'member',
        joinedAt: 1,
        lastReadAt: null,
        lastReadMessageId: null,
      })
      .execute();
    await db
      .insertInto('dm_settings')
      .values({
        accountId: doomed.id,
        inbound: 'ANYONE',
        outbound: 'ANYONE',
        partners: 'ANY_SERVER',
      })
      .execute();
    await db
      .insertInto('user_block')
      .values({ blockerId: friend.id, blockedId: doomed.id, createdAt: 1 })
      .execute();

    await requestDeletion(t, doomed);
    clock.advance(14 * DAY_MS);
    await purge(t);

    expect(await db.selectFrom('workspace').select('id').where('id', '=', solo).execute()).toEqual(
      [],
    );
    expect(
      await db.selectFrom('conversation').select('id').where('workspaceId', '=', solo).execute(),
    ).toEqual([]);
    const members = await db
      .selectFrom('workspace_member')
      .select('accountId')
      .where('workspaceId', '=', shared)
      .execute();
    expect(members).toEqual([{ accountId: friend.id }]);
    const reactions = await db
      .selectFrom('reaction')
      .select('accountId')
      .where('messageId', '=', theirs)
      .execute();
    expect(reactions).toEqual([{ accountId: friend.id }]);
    for (const [table, column] of [
      ['conversation_member', 'accountId'],
      ['dm_settings', 'accountId'],
      ['user_block', 'blockedId'],
    ] as const) {
      const rows = await db
        .selectFrom(table)
        .select(column)
        .where(column, '=', doomed.id)
        .execute();
      expect(rows, table).toEqual([]);
    }
    // Over the API too: the tombstone is in no member list, nor in the friend's block list.
    const seen = ok(
      await t.gql(
        'query($s: ID!) { workspace(serverId: $s) { memberCount members { items { user { id } } } } blockedUsers { id } }',
        { s: shared },
        friend,
      ),
    );
    expect(seen.workspace.members.items).toEqual([{ user: { id: friend.id } }]);
    expect(seen.workspace.memberCount).toBe(1);
    expect(seen.blockedUsers).toEqual([]);
    // Others' messages stay.
    expect(
      (await db.selectFrom('message').select('text').where('id', '=', theirs).executeTakeFirst())
        ?.text,
    ).toBe('from a friend');
  });

  it('deletes plaintext messages, keeps a replied-to one as a deleted shell and encrypted ones', async () => {
    const doomed = await signUpAndIn(t);
    const friend = await signUpAndIn(t);
    const ws = await workspace(t, friend.id);
    await member(t, ws, doomed.id);
    const ch = await channel(t, ws, friend.id);
    const plain = await message(t, ch, ws, doomed.id, { text: 'bye' });
    const ownThread = await message(t, ch, ws, doomed.id, { text: 'talking to myself' });
    const ownReply = await message(t, ch, ws, doomed.id, { threadRootId: ownThread });
    const repliedTo = await message(t, ch, ws, doomed.id, { text: 'a question' });
    const answer = await message(t, ch, ws, friend.id, {
      text: 'an answer',
      threadRootId: repliedTo,
    });
    const friendRoot = await message(t, ch, ws, friend.id, { text: 'a thread' });
    const doomedReply = await message(t, ch, ws, doomed.id, { threadRootId: friendRoot });
    const friendReply = await message(t, ch, ws, friend.id, { threadRootId: friendRoot });
    const encrypted = await message(t, ch, ws, doomed.id, { ciphertext: 'Y2lwaGVy' });
    const db = t.ctx.db.kysely;
    await db
      .insertInto('message_edit')
      .values({
        id: 'e1-' + repliedTo,
        messageId: repliedTo,
        previousText: 'old',
        editedAt: 1,
        editorId: doomed.id,
      })
      .execute();

    await requestDeletion(t, doomed);
    clock.advance(14 * DAY_MS);
    await purge(t);

    const rows = await db
      .selectFrom('message')
      .select(['id', 'text', 'ciphertext', 'deletedAt', 'authorId', 'replyCount'])
      .where('conversationId', '=', ch)
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const gone of [plain, ownThread, ownReply, doomedReply])
      expect(byId.has(gone)).toBe(false);
    expect(byId.get(repliedTo)).toMatchObject({
      text: null,
      deletedAt: clock.now().getTime(),
      authorId: doomed.id,
    });
    expect(byId.get(answer)?.text).toBe('an answer');
    expect(byId.get(encrypted)).toMatchObject({ ciphertext: 'Y2lwaGVy', authorId: doomed.id });
    // The friend's thread lost one of two replies.
    expect(byId.get(friendRoot)?.replyCount).toBe(1);
    expect(byId.has(friendReply)).toBe(true);
    expect(
      await db.selectFrom('message_edit').select('id').where('messageId', '=', repliedTo).execute(),
    ).toEqual([]);
  });

  it('hands a workspace that gained members after the request to its longest-standing moderator', async () => {
    const owner = await signUpAndIn(t);
    const ws = await workspace(t, owner.id);
    await requestDeletion(t, owner);
    const first = await signUpAndIn(t);
    const mod = await signUpAndIn(t);
    await member(t, ws, first.id, 'member');
    clock.advance(1000);
    await member(t, ws, mod.id, 'moderator');
    clock.advance(14 * DAY_MS);
    await purge(t);
    const row = await t.ctx.db.kysely
      .selectFrom('workspace')
      .select('ownerId')
      .where('id', '=', ws)
      .executeTakeFirstOrThrow();
    expect(row.ownerId).toBe(mod.id);
    const role = await t.ctx.db.kysely
      .selectFrom('workspace_member')
      .select('role')
      .where('workspaceId', '=', ws)
      .where('accountId', '=', mod.id)
      .executeTakeFirstOrThrow();
    expect(role.role).toBe('owner');
  });

  it('is idempotent, and a crash in one account leaves it whole for the next run', async () => {
    const a = await signUpAndIn(t);
    const b = await signUpAndIn(t);
    await requestDeletion(t, a);
    await requestDeletion(t, b);
    clock.advance(14 * DAY_MS);
    let failFor: string | null = a.id;
    t.ctx.services.accountDeletion.addPurgeStep('test-crash', async (_tx, accountId) => {
      if (accountId === failFor) throw new Error('simulated crash');
    });
    await purge(t);
    const aRow = await accountRow(t, a.id);
    expect(aRow.deletedAt).toBeNull();
    expect(aRow.username).toBe(a.username);
    // Its sessions were not ended: the transaction rolled back.
    ok(await t.gql('{ me { id } }', {}, a));
    const bRow = await accountRow(t, b.id);
    expect(bRow.deletedAt).not.toBeNull();

    failFor = null;
    const purgedAt = bRow.deletedAt;
    clock.advance(HOUR_MS);
    await purge(t);
    expect((await accountRow(t, a.id)).deletedAt).not.toBeNull();
    // A purged account is not purged again.
    expect((await accountRow(t, b.id)).deletedAt).toBe(purgedAt);
    expect(await t.ctx.services.accountDeletion.purgeDue()).toEqual([]);
  });

  it('gives tombstones distinct names when ids share their first 8 characters', async () => {
    // UUIDv7 ids made within the same minute share their first 8 characters.
    const now = clock.now().getTime();
    const ids = ['0abcdef0-1111-7000-8000-000000000001', '0abcdef0-1111-7000-8000-000000000002'];
    for (const id of ids) {
      await t.ctx.db.kysely
        .insertInto('account')
        .values({
          id,
          username: `u${id.slice(-1)}twin`,
          usernameKey: `u${id.slice(-1)}twin`,
          displayName: null,
          email: null,
          emailKey: null,
          passwordHash: null,
          keyIdentityId: null,
          homeServer: null,
          isOperator: 0,
          avatarPath: null,
          acceptedTermsUrl: null,
          acceptedTermsAt: null,
          createdAt: now,
          deletionRequestedAt: now,
          deletionScheduledFor: now,
          deletedAt: null,
        })
        .execute();
    }
    await purge(t);
    const names = [
      (await accountRow(t, ids[0]!)).username,
      (await accountRow(t, ids[1]!)).username,
    ];
    expect(names).toEqual(['deleted-0abcdef0', 'deleted-0abcdef0-1111']);
  });

  it('leaves a cancelled request alone', async () => {
    const a = await signUpAndIn(t);
    await requestDeletion(t, a);
    ok(await t.gql('mutation { cancelAccountDeletion }', {}, a));
    clock.advance(15 * DAY_MS);
    await purge(t);
    expect((await accountRow(t, a.id)).deletedAt).toBeNull();
    ok(await t.gql('{ me { id } }', {}, a));
  });
});
