import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR, type UserActor } from '../../src/auth/actor.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signIn, signUpAndIn } from '../_util/seed.js';

import {
  auditRows,
  cli,
  codeOf,
  seedConversation,
  seedMember,
  seedMessage,
  seedWorkspace,
} from './_helpers.js';

const BLOCK = `mutation($p: String!, $r: String, $c: Boolean) {
  instanceBlockPrincipal(principalId: $p, reason: $r, cascade: $c) {
    block { principalId kind reason cascade createdBy username createdAt }
    sessionsEnded messagesRemoved reactionsRemoved workspacesDeleted } }`;
/** An operator's own sign-in session as services see it. */
const operator = (a: Agent): UserActor => ({
  kind: 'user',
  accountId: a.id,
  sessionId: 'test-session',
  username: a.username,
  deviceId: null,
  homeServer: null,
  viaOperatorSession: true,
});
const UNBLOCK = `mutation($p: String!) { instanceUnblockPrincipal(principalId: $p) { principalId username } }`;
const LIST = '{ instancePrincipalBlocks { principalId kind reason cascade createdBy username } }';
const ME = '{ me { id } }';

describe('principal blocks', () => {
  let t: TestApp;
  let op: Agent;
  beforeAll(async () => {
    t = await createTestApp();
    op = await signUpAndIn(t, { operator: true });
  });
  afterAll(async () => t?.close());

  it('ends every session of the account at once and refuses sign-in', async () => {
    const victim = await signUpAndIn(t);
    const second = await signIn(t, victim.username);
    const ended: string[] = [];
    const off = t.ctx.services.sessions.onEnded((ids) => ended.push(...ids));
    const res = await t.gql(BLOCK, { p: `user:${victim.id}`, r: 'spam wave' }, op);
    off();
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.instanceBlockPrincipal).toMatchObject({
      block: {
        principalId: `user:${victim.id}`,
        kind: 'USER',
        reason: 'spam wave',
        cascade: false,
        createdBy: op.id,
        username: victim.username,
      },
      sessionsEnded: 2,
      messagesRemoved: 0,
      workspacesDeleted: 0,
    });
    // The `ended` event (which closes this process's sockets with 4401) named both sessions.
    expect(ended).toHaveLength(2);
    for (const agent of [victim, second]) {
      expect(codeOf(await t.gql(ME, {}, agent))).toBe('UNAUTHENTICATED');
    }
    const login = await t.gql(
      'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }',
      { u: victim.username, p: DEFAULT_PASSWORD },
    );
    expect(codeOf(login)).toBe('FORBIDDEN');
    expect(login.response.cookies).toHaveLength(0);
    // A wrong password still gets the ordinary answer: a block is no oracle for guessers.
    const wrong = await t.gql(
      'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }',
      { u: victim.username, p: 'not the password at all' },
    );
    expect(codeOf(wrong)).toBe('UNAUTHENTICATED');

    // Unblocked, the account signs in again; its old sessions stay ended.
    const un = await t.gql(UNBLOCK, { p: `user:${victim.id}` }, op);
    expect(un.body.data?.instanceUnblockPrincipal.principalId).toBe(`user:${victim.id}`);
    expect(codeOf(await t.gql(ME, {}, victim))).toBe('UNAUTHENTICATED');
    const back = await signIn(t, victim.username);
    expect(codeOf(await t.gql(ME, {}, back))).toBeUndefined();
  });

  it('makes sessions of a blocked principal dead wherever they are read, even if not ended', async () => {
    // As if another process wrote the block: the row exists, the sessions were never ended.
    const victim = await signUpAndIn(t);
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ keyIdentityId: 'kid_somekeyidentity000000' })
      .where('id', '=', victim.id)
      .execute();
    const session = await t.ctx.services.sessions.resolve(victim.cookies.svc_session);
    expect(session).not.toBeNull();
    await t.ctx.db.kysely
      .insertInto('principal_block')
      .values({
        principalId: 'key:kid_somekeyidentity000000',
        kind: 'key',
        reason: null,
        cascade: 0,
        createdAt: Date.now(),
        createdBy: 'cli',
      })
      .execute();
    expect(await t.ctx.services.sessions.resolve(victim.cookies.svc_session)).toBeNull();
    // The WebSocket recheck finds it dead too.
    expect(await t.ctx.services.sessions.deadAmong([session!.sessionId])).toEqual([
      session!.sessionId,
    ]);
    expect(codeOf(await t.gql(ME, {}, victim))).toBe('UNAUTHENTICATED');
  });

  it('refuses signups with a blocked key identity, server or remote person', async () => {
    const mod = t.ctx.services.moderation;
    await mod.blocks.block({ kind: 'cli' }, { principalId: 'key:kid_blockedsignupkey0000' });
    await expect(
      mod.assertNotBlocked({ keyIdentityId: 'kid_blockedsignupkey0000' }),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(mod.assertNotBlocked({ keyIdentityId: 'kid_otherkey' })).resolves.toBeUndefined();
    await mod.blocks.block({ kind: 'cli' }, { principalId: 'server:Evil.Example' });
    await expect(
      mod.assertNotBlocked({ homeServer: 'evil.example', username: 'anyone' }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await mod.blocks.block({ kind: 'cli' }, { principalId: 'remote:Mallory@good.example' });
    await expect(
      mod.assertNotBlocked({ homeServer: 'GOOD.example', username: 'mallory' }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(
      mod.assertNotBlocked({ homeServer: 'good.example', username: 'alice' }),
    ).resolves.toBeUndefined();
    expect(await mod.blocks.isServerBlocked('EVIL.example')).toBe(true);
  });

  it('covers a person from another server signed in here by server and by name', async () => {
    const remote = await signUpAndIn(t, { username: 'visitor' });
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ homeServer: 'Far.Example' })
      .where('id', '=', remote.id)
      .execute();
    const res = await t.gql(BLOCK, { p: 'remote:visitor@far.example' }, op);
    expect(res.body.data?.instanceBlockPrincipal.block).toMatchObject({
      principalId: 'remote:visitor@far.example',
      kind: 'REMOTE',
      username: 'visitor',
    });
    expect(res.body.data?.instanceBlockPrincipal.sessionsEnded).toBe(1);
    expect(codeOf(await t.gql(ME, {}, remote))).toBe('UNAUTHENTICATED');
  });

  it('with cascade, removes what the principal posted and the workspaces it owns, and nothing else', async () => {
    const spammer = await signUpAndIn(t);
    const bystander = await signUpAndIn(t);
    const own = await seedWorkspace(t, spammer, { name: 'spam land' });
    await seedMember(t, own.id, bystander, 'member', [own.channelId]);
    const other = await seedWorkspace(t, bystander, { name: 'good place' });
    await seedMember(t, other.id, spammer, 'member', [other.channelId]);
    const spam = await seedMessage(t, other.channelId, spammer, 'spam in a good place');
    const good = await seedMessage(t, other.channelId, bystander, 'a good message');
    const dm = await seedConversation(t, { kind: 'direct', members: [spammer, bystander] });
    const dmSpam = await seedMessage(t, dm, spammer, 'spam by dm');
    await seedMessage(t, own.channelId, spammer, 'inside own workspace');
    const db = t.ctx.db.kysely;
    const now = Date.now();
    await db
      .insertInto('message_edit')
      .values({
        id: crypto.randomUUID(),
        messageId: spam,
        previousText: 'old spam',
        editedAt: now,
        editorId: spammer.id,
      })
      .execute();
    await db
      .insertInto('reaction')
      .values({ messageId: good, accountId: spammer.id, emoji: '💩', createdAt: now })
      .execute();
    await db
      .insertInto('reaction')
      .values({ messageId: spam, accountId: bystander.id, emoji: '👀', createdAt: now })
      .execute();
    await db
      .insertInto('pin')
      .values({
        conversationId: other.channelId,
        messageId: spam,
        pinnedBy: bystander.id,
        pinnedAt: now,
      })
      .execute();
    // A report made before the block keeps its snapshot.
    const report = await t.gql(
      'mutation($id: ID!) { reportMessage(messageId: $id, category: SPAM) { id } }',
      { id: spam },
      bystander,
    );
    expect(report.body.errors).toBeUndefined();

    const res = await t.gql(BLOCK, { p: `user:${spammer.id}`, c: true, r: 'spam' }, op);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.instanceBlockPrincipal).toMatchObject({
      block: { cascade: true },
      messagesRemoved: 2,
      reactionsRemoved: 1,
      workspacesDeleted: 1,
    });

    expect(
      await db.selectFrom('workspace').select('id').where('id', '=', own.id).execute(),
    ).toEqual([]);
    expect(
      await db.selectFrom('conversation').select('id').where('workspaceId', '=', own.id).execute(),
    ).toEqual([]);
    const messages = await db
      .selectFrom('message')
      .select(['id', 'text', 'deletedAt', 'deletedBy'])
      .where('id', 'in', [spam, good, dmSpam])
      .execute();
    const byId = new Map(messages.map((m) => [m.id, m]));
    expect(byId.get(spam)).toMatchObject({ text: null, deletedBy: op.id });
    expect(byId.get(spam)?.deletedAt).not.toBeNull();
    expect(byId.get(dmSpam)).toMatchObject({ text: null });
    expect(byId.get(good)).toMatchObject({ text: 'a good message', deletedAt: null });
    expect(
      await db.selectFrom('message_edit').select('id').where('messageId', '=', spam).execute(),
    ).toEqual([]);
    expect(
      await db.selectFrom('reaction').selectAll().where('messageId', 'in', [spam, good]).execute(),
    ).toEqual([]);
    expect(await db.selectFrom('pin').selectAll().where('messageId', '=', spam).execute()).toEqual(
      [],
    );
    // The bystander's workspace and membership stay; so does the spammer's membership in it.
    expect(
      await db
        .selectFrom('workspace_member')
        .select('accountId')
        .where('workspaceId', '=', other.id)
        .execute(),
    ).toHaveLength(2);
    const reports = await t.gql('{ instanceReports { subjectId snapshot { text } } }', {}, op);
    const snap = reports.body.data?.instanceReports.find(
      (r: { subjectId: string }) => r.subjectId === spam,
    );
    expect(snap.snapshot.text).toBe('spam in a good place');
    const row = (await auditRows(t)).at(-1);
    expect(row).toMatchObject({
      action: 'principal.block',
      target: `user:${spammer.id}`,
      reason: 'spam',
    });
    expect(JSON.parse(row!.details!)).toMatchObject({
      cascade: true,
      messagesRemoved: 2,
      workspacesDeleted: 1,
    });
  });

  it('refuses bad input with clear errors', async () => {
    const someone = await signUpAndIn(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ p: 'nonsense' }, 'VALIDATION'],
      [{ p: 'user:not-a-uuid' }, 'VALIDATION'],
      [{ p: 'server:bad host!' }, 'VALIDATION'],
      [{ p: 'remote:nohost@' }, 'VALIDATION'],
      [{ p: 'x'.repeat(400) }, 'VALIDATION'],
      [{ p: 'user:01890000-0000-7000-8000-00000000dead' }, 'NOT_FOUND'],
      [{ p: '@no-such-user' }, 'NOT_FOUND'],
      [{ p: `user:${op.id}` }, 'VALIDATION'],
      [{ p: `@${op.username}` }, 'VALIDATION'],
      [{ p: `user:${someone.id}`, r: 'r'.repeat(501) }, 'VALIDATION'],
    ];
    for (const [vars, code] of cases) {
      const res = await t.gql(BLOCK, vars, op);
      expect([vars, codeOf(res)]).toEqual([vars, code]);
    }
    const ok = await t.gql(BLOCK, { p: `@${someone.username}`, r: 'r'.repeat(500) }, op);
    expect(ok.body.data?.instanceBlockPrincipal.block.principalId).toBe(`user:${someone.id}`);
    const again = await t.gql(BLOCK, { p: `user:${someone.id}` }, op);
    expect(codeOf(again)).toBe('CONFLICT');
    // The same block twice at once: one is made, the other is told it exists.
    const [a, b] = await Promise.all([
      t.gql(BLOCK, { p: 'server:twice.example' }, op),
      t.gql(BLOCK, { p: 'server:twice.example' }, op),
    ]);
    expect([codeOf(a), codeOf(b)].sort()).toEqual(['CONFLICT', undefined].sort());
    expect(codeOf(await t.gql(UNBLOCK, { p: 'server:never-blocked.example' }, op))).toBe(
      'NOT_FOUND',
    );
    expect(codeOf(await t.gql(UNBLOCK, { p: 'garbage' }, op))).toBe('VALIDATION');
  });

  it('refuses to block the last operator, even from the CLI', async () => {
    // Other operators exist in this file only as `op`; give the test its own database.
    const t2 = await createTestApp();
    try {
      const only = await signUpAndIn(t2, { operator: true });
      const run = await cli(t2, ['principal', 'block', `user:${only.id}`]);
      expect(run.code).toBe(1);
      expect(run.err).toMatch(/last instance operator.*\(VALIDATION\)/);
      const second = await signUpAndIn(t2, { operator: true });
      // With a second operator, one may be blocked, but then not the other.
      const first = await t2.gql(BLOCK, { p: `user:${only.id}` }, second);
      expect(first.body.errors).toBeUndefined();
      const third = await signUpAndIn(t2);
      await cli(t2, ['operator', 'grant', third.username]);
      expect((await cli(t2, ['principal', 'block', `user:${third.id}`])).code).toBe(0);
      const last = await cli(t2, ['principal', 'block', `user:${second.id}`]);
      expect(last.err).toMatch(/last instance operator/);
      // Two operators blocking each other at the same moment: one wins, never both.
      expect((await cli(t2, ['principal', 'unblock', `user:${third.id}`])).code).toBe(0);
      // (Called on the service, so both have passed the operator check before either commits.)
      const blocks = t2.ctx.services.moderation.blocks;
      const outcomes = await Promise.allSettled([
        blocks.block(operator(second), { principalId: `user:${third.id}` }),
        blocks.block(operator(third), { principalId: `user:${second.id}` }),
      ]);
      expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toMatchObject({ code: 'VALIDATION' });
      expect((await blocks.list(CLI_ACTOR)).filter((b) => b.kind === 'user')).toHaveLength(2);
    } finally {
      await t2.close();
    }
  });

  it('lists blocks newest first with the username holding each, from GraphQL and the CLI', async () => {
    const holder = await signUpAndIn(t);
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ keyIdentityId: 'kid_listedkey00000000000' })
      .where('id', '=', holder.id)
      .execute();
    const cliBlock = await cli(t, [
      'principal',
      'block',
      'key:kid_listedkey00000000000',
      '--reason',
      'bot',
    ]);
    expect(cliBlock.code).toBe(0);
    expect(cliBlock.json.block).toMatchObject({
      principalId: 'key:kid_listedkey00000000000',
      username: holder.username,
      createdBy: 'cli',
      reason: 'bot',
    });
    await new Promise((r) => setTimeout(r, 5));
    await t.gql(BLOCK, { p: 'server:newest.example' }, op);
    const list = (await t.gql(LIST, {}, op)).body.data?.instancePrincipalBlocks;
    expect(list[0]).toMatchObject({
      principalId: 'server:newest.example',
      kind: 'SERVER',
      username: null,
    });
    expect(list[1]).toMatchObject({
      principalId: 'key:kid_listedkey00000000000',
      kind: 'KEY',
      username: holder.username,
    });
    const cliList = await cli(t, ['principal', 'list']);
    expect(cliList.json.map((b: { principalId: string }) => b.principalId)).toEqual(
      list.map((b: { principalId: string }) => b.principalId),
    );
    const un = await cli(t, ['principal', 'unblock', 'server:newest.example']);
    expect(un.code).toBe(0);
    const unAgain = await cli(t, ['principal', 'unblock', 'server:newest.example']);
    expect(unAgain.code).toBe(1);
    expect(unAgain.err).toMatch(/NOT_FOUND/);
    const rows = await auditRows(t);
    expect(rows.at(-1)).toMatchObject({
      action: 'principal.unblock',
      actorId: 'cli',
      target: 'server:newest.example',
    });
  });
});
