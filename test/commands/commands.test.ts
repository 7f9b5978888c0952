import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import {
  createTestApp,
  createTestDatabase,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { conversationOf } from '../conversations/_helpers.js';
import { createWorkspace, expectCode, inviteAndJoin, ok, setRole } from '../workspaces/_helpers.js';

import { bundleBytes } from '../plugins/_bundles.js';
import { ADD, uploadBundle } from '../plugins/_helpers.js';

import { auditRows, exec, generalOf } from './_helpers.js';

const clock = new ManualClock();
let database: TestDatabase;
let t: TestApp;
// owner, moderator, member, other member, operator (member), outsider
let olga: Agent, mona: Agent, mike: Agent, max: Agent, opal: Agent, otto: Agent;
let serverId: string, general: string, otherServer: string;

const LIST = `query($s: CommandSurface!, $c: CommandContextInput) { commands(surface: $s, context: $c) {
  name capability destructive surfaces aiCallable nlDescription intentSamples source { kind } } }`;
const timedOutUntil = async (userId: string) =>
  (
    await t.ctx.db.kysely
      .selectFrom('workspace_member')
      .select('timedOutUntil')
      .where('workspaceId', '=', serverId)
      .where('accountId', '=', userId)
      .executeTakeFirstOrThrow()
  ).timedOutUntil;

beforeAll(async () => {
  database = await createTestDatabase();
  t = await createTestApp({ clock, database });
  [olga, mona, mike, max, otto] = await Promise.all(
    ['olga', 'mona', 'mike', 'max', 'otto'].map((u) => signUpAndIn(t, { username: `${u}cmd` })),
  );
  opal = await signUpAndIn(t, { username: 'opalcmd', operator: true });
  serverId = (await createWorkspace(t, olga, 'Commands')).id;
  await inviteAndJoin(t, olga, serverId, [mona, mike, max, opal]);
  ok(await setRole(t, olga, serverId, mona.id, 'MODERATOR'));
  general = await generalOf(t, olga, serverId);
  otherServer = (await createWorkspace(t, otto, 'Elsewhere')).id;
});
afterAll(async () => {
  await t?.close();
  await database.drop();
});

describe('the registry', () => {
  it('lists only what the caller may run on a surface', async () => {
    const c = { serverId, conversationId: general };
    const member = ok(await t.gql(LIST, { s: 'MESSAGE_BOX', c }, mike)).commands as any[];
    const names = member.map((x) => x.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'me',
        'shrug',
        'topic',
        'rename',
        'invite',
        'pin',
        'leave',
        'away',
        'remind',
      ]),
    );
    expect(names).not.toContain('kick');
    expect(names).not.toContain('archive');
    expect(names).not.toContain('block-principal');
    const mod = (ok(await t.gql(LIST, { s: 'PALETTE', c }, mona)).commands as any[]).map(
      (x) => x.name,
    );
    expect(mod).toEqual(expect.arrayContaining(['kick', 'timeout', 'archive']));
    expect(mod).not.toContain('ip-block');
    const op = (ok(await t.gql(LIST, { s: 'PALETTE', c }, opal)).commands as any[]).map(
      (x) => x.name,
    );
    expect(op).toEqual(expect.arrayContaining(['block-principal', 'ip-block', 'resolve-report']));
    const kick = (ok(await t.gql(LIST, { s: 'PALETTE', c }, mona)).commands as any[]).find(
      (x) => x.name === 'kick',
    );
    expect(kick).toMatchObject({
      capability: 'member:remove',
      destructive: true,
      source: { kind: 'BUILTIN' },
    });
    // Without a workspace only the commands that need none.
    const bare = (ok(await t.gql(LIST, { s: 'PALETTE' }, mike)).commands as any[]).map(
      (x) => x.name,
    );
    expect(bare).toEqual(['away']);
  });

  it('offers channel commands in channels only', async () => {
    const dm = await conversationOf(t, mike, [max]);
    const c = { conversationId: dm.conversation.id as string };
    const names = (ok(await t.gql(LIST, { s: 'MESSAGE_BOX', c }, mike)).commands as any[]).map(
      (x) => x.name,
    );
    expect(names).toEqual(expect.arrayContaining(['me', 'shrug', 'remind', 'pin', 'away']));
    for (const n of ['topic', 'rename', 'invite', 'archive', 'leave'])
      expect(names).not.toContain(n);
    const res = await exec(t, mike, { command: 'topic', args: { topic: 'x' }, context: c });
    expect(res.body.errors![0]!.extensions!.argument).toBe('context.conversationId');
    expect(
      ok(await exec(t, mike, { command: 'me', args: { text: 'waves' }, context: c })).executeCommand
        .status,
    ).toBe('DONE');
  });

  it('answers NOT_FOUND for a workspace the caller is not in', async () => {
    expectCode(
      await t.gql(LIST, { s: 'PALETTE', c: { serverId: otherServer } }, mike),
      'NOT_FOUND',
    );
  });
});

describe('executeCommand', () => {
  it('runs a built-in through the same service call as its mutation', async () => {
    const res = ok(
      await exec(t, mike, {
        command: '/shrug',
        args: { text: 'no idea' },
        context: { conversationId: general },
      }),
    );
    expect(res.executeCommand).toMatchObject({ status: 'DONE', command: { name: 'shrug' } });
    const stored = await t.ctx.db.kysely
      .selectFrom('message')
      .select(['text', 'authorId'])
      .where('id', '=', res.executeCommand.messageId)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ text: 'no idea ¯\\_(ツ)_/¯', authorId: mike.id });
    const topic = ok(
      await exec(t, mike, {
        command: 'topic',
        args: { topic: 'Plans' },
        context: { conversationId: general },
      }),
    );
    expect(topic.executeCommand.message).toBe('topic set to "Plans"');
  });

  it('validates arguments against their types, naming the argument', async () => {
    const c = { serverId, conversationId: general };
    let res = await exec(t, mona, {
      command: 'timeout',
      args: { user: '@mikecmd', duration: 'soon' },
      context: c,
    });
    expectCode(res, 'VALIDATION');
    expect(res.body.errors![0]!.extensions!.argument).toBe('duration');
    expect(res.body.errors![0]!.message).toMatch(/^duration: /);
    res = await exec(t, mona, { command: 'timeout', args: { duration: '1h' }, context: c });
    expect(res.body.errors![0]!.extensions!.argument).toBe('user');
    res = await exec(t, mona, {
      command: 'timeout',
      args: { user: '@nobody-here', duration: '1h' },
      context: c,
    });
    expect(res.body.errors![0]!.extensions!.argument).toBe('user');
    res = await exec(t, mike, { command: 'me', args: { text: 'x', extra: 1 }, context: c });
    expect(res.body.errors![0]!.extensions!.argument).toBe('extra');
    res = await exec(t, mike, { command: 'me', args: { text: 'x' }, context: { serverId } });
    expect(res.body.errors![0]!.extensions!.argument).toBe('context.conversationId');
    expectCode(await exec(t, mike, { command: 'nope', context: c }), 'NOT_FOUND');
  });

  it('checks the capability for the acting user at run time', async () => {
    const res = await exec(t, mike, {
      command: 'kick',
      args: { user: '@maxcmd' },
      context: { serverId },
    });
    expectCode(res, 'FORBIDDEN');
    expectCode(
      await exec(t, mike, {
        command: 'me',
        args: { text: 'hi' },
        context: { serverId: otherServer },
      }),
      'VALIDATION',
    );
  });

  it('asks a confirmation for a destructive command, then runs it once with the token', async () => {
    const c = { serverId, conversationId: general };
    const input = { command: 'timeout', args: { user: '@maxcmd', duration: '2h' }, context: c };
    const first = ok(await exec(t, mona, input)).executeCommand;
    expect(first.status).toBe('CONFIRMATION_REQUIRED');
    expect(first.confirmation.summary).toMatch(/time out .* for 120 minutes/);
    // Nothing happened yet.
    expect(await timedOutUntil(max.id)).toBeNull();
    const token = first.confirmation.token as string;
    const done = ok(await exec(t, mona, { ...input, confirmationToken: token })).executeCommand;
    expect(done.status).toBe('DONE');
    expect(await timedOutUntil(max.id)).not.toBeNull();
    // Replayed: stale.
    expectCode(await exec(t, mona, { ...input, confirmationToken: token }), 'CONFIRMATION_STALE');
  });

  it('refuses a token for other arguments, another context, another user, or after expiry', async () => {
    const c = { serverId, conversationId: general };
    const input = { command: 'timeout', args: { user: '@mikecmd', duration: '1h' }, context: c };
    const token = ok(await exec(t, mona, input)).executeCommand.confirmation.token as string;
    // Other arguments.
    expectCode(
      await exec(t, mona, {
        ...input,
        args: { user: '@maxcmd', duration: '1h' },
        confirmationToken: token,
      }),
      'CONFIRMATION_FAILED',
    );
    expectCode(
      await exec(t, mona, {
        ...input,
        args: { user: '@mikecmd', duration: '2h' },
        confirmationToken: token,
      }),
      'CONFIRMATION_FAILED',
    );
    // Another context (no conversation), another command.
    expectCode(
      await exec(t, mona, { ...input, context: { serverId }, confirmationToken: token }),
      'CONFIRMATION_FAILED',
    );
    expectCode(
      await exec(t, mona, {
        command: 'kick',
        args: { user: '@mikecmd' },
        context: c,
        confirmationToken: token,
      }),
      'CONFIRMATION_FAILED',
    );
    // Another user, even the owner who may run the command.
    expectCode(await exec(t, olga, { ...input, confirmationToken: token }), 'CONFIRMATION_FAILED');
    // An unknown token.
    expectCode(
      await exec(t, mona, { ...input, confirmationToken: 'x'.repeat(43) }),
      'CONFIRMATION_FAILED',
    );
    // The failed attempts did not spend it.
    expect(
      ok(await exec(t, mona, { ...input, confirmationToken: token })).executeCommand.status,
    ).toBe('DONE');
    // A token past its five minutes is stale.
    const again = ok(await exec(t, mona, input)).executeCommand.confirmation.token as string;
    clock.advance(5 * MINUTE_MS + 1);
    expectCode(await exec(t, mona, { ...input, confirmationToken: again }), 'CONFIRMATION_STALE');
  });

  it('runs a command once when its token is spent twice at the same moment', async () => {
    const input = {
      command: 'timeout',
      args: { user: '@maxcmd', duration: '3m' },
      context: { serverId, conversationId: general },
    };
    const token = ok(await exec(t, mona, input)).executeCommand.confirmation.token as string;
    const runs = await Promise.all(
      [1, 2, 3].map(() => exec(t, mona, { ...input, confirmationToken: token })),
    );
    const codes = runs.map((r) => r.body.errors?.[0]?.extensions?.code ?? 'DONE').sort();
    expect(codes).toEqual(['CONFIRMATION_STALE', 'CONFIRMATION_STALE', 'DONE']);
  });

  it('writes one audit row per run with initiator, arguments, context, outcome and confirmation', async () => {
    const before = (await auditRows(t, mona.id)).length;
    const c = { serverId, conversationId: general };
    const input = { command: 'timeout', args: { user: '@mikecmd', duration: '10m' }, context: c };
    const token = ok(await exec(t, mona, { ...input, initiator: 'KEYBIND' })).executeCommand
      .confirmation.token;
    ok(await exec(t, mona, { ...input, initiator: 'KEYBIND', confirmationToken: token }));
    const rows = (await auditRows(t, mona.id)).slice(before);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.target).toBe(`workspace:${serverId}`);
    expect(rows[0]!.d).toMatchObject({
      initiator: 'KEYBIND',
      command: 'timeout',
      args: { user: mike.id, duration: 10 * MINUTE_MS },
      context: { serverId, conversationId: general },
      outcome: 'CONFIRMATION_REQUIRED',
      confirmation: 'ISSUED',
    });
    expect(rows[1]!.d).toMatchObject({ outcome: 'DONE', confirmation: 'USED' });
    // A refusal is audited too.
    expectCode(await exec(t, mike, { command: 'archive', context: c }), 'FORBIDDEN');
    const refused = (await auditRows(t, mike.id)).at(-1)!;
    expect(refused.d).toMatchObject({
      command: 'archive',
      outcome: 'REFUSED',
      error: { code: 'FORBIDDEN' },
    });
    // Moderators read their workspace's command audit; members may not.
    const AUDIT = `query($s: ID!) { commandAudit(serverId: $s, limit: 3) { nextCursor entries { actorId initiator
      command outcome errorCode confirmation args } } }`;
    const page = ok(await t.gql(AUDIT, { s: serverId }, mona)).commandAudit;
    expect(page.entries[0]).toMatchObject({
      actorId: mike.id,
      command: 'archive',
      outcome: 'REFUSED',
      errorCode: 'FORBIDDEN',
    });
    expect(page.nextCursor).not.toBeNull();
    expectCode(await t.gql(AUDIT, { s: serverId }, mike), 'FORBIDDEN');
  });

  it('redacts secret-looking arguments in the audit', async () => {
    // An unknown argument named like a secret: refused, and its value never stored.
    await exec(t, mike, {
      command: 'me',
      args: { text: 'x', password: 'hunter2' },
      context: { conversationId: general },
    });
    const row = (await auditRows(t, mike.id)).at(-1)!;
    expect(row.details).not.toContain('hunter2');
    expect(row.d.args.password).toBe('[redacted]');
  });

  it('takes the message-box line as the arguments in order', async () => {
    const res = ok(
      await exec(t, mike, {
        command: 'remind',
        text: '10m water the plants',
        context: { conversationId: general },
      }),
    ).executeCommand;
    expect(res.status).toBe('DONE');
    const row = (await auditRows(t, mike.id)).at(-1)!;
    expect(row.d.args).toEqual({ in: 10 * MINUTE_MS, text: 'water the plants' });
    let bad = await exec(t, mike, {
      command: 'pin',
      text: 'a b',
      context: { conversationId: general },
    });
    expect(bad.body.errors![0]!.extensions!.argument).toBe('text');
    bad = await exec(t, mike, {
      command: 'remind',
      text: 'soon x',
      context: { conversationId: general },
    });
    expect(bad.body.errors![0]!.extensions!.argument).toBe('in');
    bad = await exec(t, mike, {
      command: 'me',
      text: 'x',
      args: { text: 'x' },
      context: { conversationId: general },
    });
    expectCode(bad, 'VALIDATION');
  });

  it('says in words what a confirmation will do, naming people and channels', async () => {
    const asked = ok(
      await exec(t, olga, { command: 'archive', context: { conversationId: general } }),
    ).executeCommand;
    expect(asked.confirmation.summary).toMatch(/^archive #general: nobody will be able to post/);
    const kick = ok(
      await exec(t, olga, { command: 'kick', text: '@maxcmd', context: { serverId } }),
    ).executeCommand;
    expect(kick.confirmation.summary).toBe('remove @maxcmd from this workspace');
    expect(new Date(kick.confirmation.expiresAt).getTime() - clock.now().getTime()).toBe(
      5 * MINUTE_MS,
    );
  });

  it('lists plugin commands and answers CLIENT_ACTION for them, checked and audited', async () => {
    const sha = await uploadBundle(t, olga, serverId, bundleBytes());
    ok(await t.gql(ADD, { i: { serverId, bundleSha256: sha } }, olga));
    const c = { serverId, conversationId: general };
    const listed = (ok(await t.gql(LIST, { s: 'MESSAGE_BOX', c }, mike)).commands as any[]).find(
      (x) => x.name === 'standup',
    );
    expect(listed).toMatchObject({
      source: { kind: 'PLUGIN' },
      aiCallable: false,
      capability: 'workspace:read',
    });
    const res = ok(
      await exec(t, mike, {
        command: 'standup',
        args: { yesterday: 'tests', today: 'docs' },
        context: c,
      }),
    ).executeCommand;
    expect(res).toMatchObject({
      status: 'CLIENT_ACTION',
      command: { source: { kind: 'PLUGIN', pluginId: 'com.example.standup' } },
    });
    // The checked arguments come back for the client's plugin, a typed line parsed as the
    // server reads it (a quoted phrase is one word, a boolean's text its value, an argument not
    // given null).
    expect(res.args).toEqual({ yesterday: 'tests', today: 'docs', blocked: null });
    const typed = ok(
      await exec(t, mike, { command: 'standup', text: '"fixed it" ship true', context: c }),
    ).executeCommand;
    expect(typed.args).toEqual({ yesterday: 'fixed it', today: 'ship', blocked: true });
    // A built-in's run hands nothing back (the owner's: an earlier test timed Mike out).
    const shrug = ok(
      await exec(t, olga, { command: 'shrug', args: {}, context: c }),
    ).executeCommand;
    expect(shrug).toMatchObject({ status: 'DONE', args: null });
    const bad = await exec(t, mike, {
      command: 'standup',
      args: { yesterday: 'tests' },
      context: c,
    });
    expect(bad.body.errors![0]!.extensions!.argument).toBe('today');
    expect((await auditRows(t, mike.id)).at(-1)!.d).toMatchObject({
      command: 'standup',
      source: 'com.example.standup',
      outcome: 'REFUSED',
    });
    // Not offered to agents, nor in another workspace.
    expectCode(
      await exec(t, mike, {
        command: 'standup',
        args: { yesterday: 'a', today: 'b' },
        context: c,
        initiator: 'AGENT',
      }),
      'FORBIDDEN',
    );
    expectCode(
      await exec(t, otto, {
        command: 'standup',
        args: { yesterday: 'a', today: 'b' },
        context: { serverId: otherServer },
      }),
      'NOT_FOUND',
    );
  });
});
