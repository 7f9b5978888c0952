import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createTestApp,
  createTestDatabase,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, expectCode, inviteAndJoin, ok } from '../workspaces/_helpers.js';

import { auditRows, exec, generalOf } from './_helpers.js';

// Two servers on one database file each: ai_commands on, and off.
let dbOn: TestDatabase, dbOff: TestDatabase;
let on: TestApp, off: TestApp;

const LIST = `query($s: CommandSurface!, $c: CommandContextInput) { commands(surface: $s, context: $c) {
  name aiCallable nlDescription intentSamples } }`;
const DISCOVER = `query($q: String!, $c: CommandContextInput) { commandDiscover(query: $q, context: $c) {
  score command { name } } }`;

async function seed(t: TestApp) {
  const owner = await signUpAndIn(t, { username: 'ownerai' });
  const member = await signUpAndIn(t, { username: 'memberai' });
  const victim = await signUpAndIn(t, { username: 'victimai' });
  const serverId = (await createWorkspace(t, owner, 'Agents')).id;
  await inviteAndJoin(t, owner, serverId, [member, victim]);
  const general = await generalOf(t, owner, serverId);
  return { owner, member, victim, serverId, general };
}

let sOn: Awaited<ReturnType<typeof seed>>, sOff: Awaited<ReturnType<typeof seed>>;

beforeAll(async () => {
  dbOn = await createTestDatabase();
  dbOff = await createTestDatabase();
  on = await createTestApp({ database: dbOn });
  off = await createTestApp({ database: dbOff, env: { SVC_FEATURES_DISABLED: 'ai_commands' } });
  sOn = await seed(on);
  sOff = await seed(off);
});
afterAll(async () => {
  await on?.close();
  await off?.close();
  await dbOn.drop();
  await dbOff.drop();
});

describe('ai_commands on', () => {
  it('lists AI-callable commands with their agent-facing fields', async () => {
    const c = { serverId: sOn.serverId, conversationId: sOn.general };
    const cmds = ok(await on.gql(LIST, { s: 'AI', c }, sOn.member)).commands as any[];
    expect(cmds.every((x) => x.aiCallable)).toBe(true);
    const remind = cmds.find((x) => x.name === 'remind');
    expect(remind.nlDescription).toMatch(/reminder/);
    expect(remind.intentSamples.length).toBeGreaterThan(0);
    expect(cmds.map((x) => x.name)).not.toContain('kick');
  });

  it('ranks the caller’s commands for a request in words', async () => {
    const c = { serverId: sOn.serverId, conversationId: sOn.general };
    let found = ok(
      await on.gql(DISCOVER, { q: 'remind me in 10 minutes to call Sam', c }, sOn.member),
    ).commandDiscover as any[];
    expect(found[0].command.name).toBe('remind');
    found = ok(await on.gql(DISCOVER, { q: 'change the topic of this channel', c }, sOn.member))
      .commandDiscover as any[];
    expect(found[0].command.name).toBe('topic');
    // A Member's discovery never offers a moderator command; the owner's does.
    found = ok(await on.gql(DISCOVER, { q: 'kick bob out of the workspace', c }, sOn.member))
      .commandDiscover as any[];
    expect(found.map((f) => f.command.name)).not.toContain('kick');
    found = ok(await on.gql(DISCOVER, { q: 'kick bob out of the workspace', c }, sOn.owner))
      .commandDiscover as any[];
    expect(found[0].command.name).toBe('kick');
    expectCode(await on.gql(DISCOVER, { q: '  ', c }, sOn.member), 'VALIDATION');
  });

  it('runs an agent’s command with the same checks and audit', async () => {
    const c = { serverId: sOn.serverId, conversationId: sOn.general };
    const res = ok(
      await exec(on, sOn.member, {
        command: 'me',
        args: { text: 'waves' },
        context: c,
        initiator: 'AGENT',
      }),
    ).executeCommand;
    expect(res.status).toBe('DONE');
    expect((await auditRows(on, sOn.member.id)).at(-1)!.d).toMatchObject({
      initiator: 'AGENT',
      outcome: 'DONE',
    });
  });

  it('a Member’s agent trying every moderator command is refused each time, and each is audited', async () => {
    const c = { serverId: sOn.serverId, conversationId: sOn.general };
    const before = (await auditRows(on, sOn.member.id)).length;
    const attempts: Array<[string, Record<string, unknown>]> = [
      ['kick', { user: '@victimai' }],
      ['timeout', { user: '@victimai', duration: '1h' }],
      ['archive', {}],
      ['block-principal', { principal: 'user:@victimai' }],
      ['unblock-principal', { principal: 'user:@victimai' }],
      ['ip-block', { cidr: '203.0.113.0/24' }],
      ['ip-unblock', { cidr: '203.0.113.0/24' }],
      ['resolve-report', { report: '01900000-0000-7000-8000-000000000000' }],
    ];
    for (const [command, args] of attempts) {
      const res = await exec(on, sOn.member, { command, args, context: c, initiator: 'AGENT' });
      expectCode(res, 'FORBIDDEN');
      // And declared as the person themself: the same refusal.
      expectCode(
        await exec(on, sOn.member, { command, args, context: c, initiator: 'USER' }),
        'FORBIDDEN',
      );
    }
    const rows = (await auditRows(on, sOn.member.id)).slice(before);
    expect(rows).toHaveLength(attempts.length * 2);
    expect(rows.every((r) => r.d.outcome === 'REFUSED' && r.d.error.code === 'FORBIDDEN')).toBe(
      true,
    );
    expect(rows.filter((r) => r.d.initiator === 'AGENT')).toHaveLength(attempts.length);
    // The victim is still a member, unmuted.
    const m = await on.ctx.db.kysely
      .selectFrom('workspace_member')
      .select(['timedOutUntil'])
      .where('accountId', '=', sOn.victim.id)
      .executeTakeFirst();
    expect(m).toEqual({ timedOutUntil: null });
  });

  it('an operator’s agent is refused instance moderation', async () => {
    const op = await signUpAndIn(on, { username: 'opai', operator: true });
    const res = await exec(on, op, {
      command: 'ip-unblock',
      args: { cidr: '198.51.100.1' },
      initiator: 'AGENT',
    });
    expectCode(res, 'FORBIDDEN');
    // The operator in person passes the operator check (and gets the service's own answer).
    expectCode(
      await exec(on, op, { command: 'ip-unblock', args: { cidr: '198.51.100.1' } }),
      'NOT_FOUND',
    );
  });
});

describe('ai_commands off', () => {
  it('answers FEATURE_DISABLED for commandDiscover, the AI surface and AGENT runs; blanks the agent fields', async () => {
    const c = { serverId: sOff.serverId, conversationId: sOff.general };
    let res = await off.gql(DISCOVER, { q: 'remind me', c }, sOff.member);
    expectCode(res, 'FEATURE_DISABLED');
    expect(res.body.errors![0]!.extensions!.feature).toBe('ai_commands');
    expectCode(await off.gql(LIST, { s: 'AI', c }, sOff.member), 'FEATURE_DISABLED');
    res = await exec(off, sOff.member, {
      command: 'me',
      args: { text: 'x' },
      context: c,
      initiator: 'AGENT',
    });
    expectCode(res, 'FEATURE_DISABLED');
    expect((await auditRows(off, sOff.member.id)).at(-1)!.d).toMatchObject({
      initiator: 'AGENT',
      outcome: 'REFUSED',
      error: { code: 'FEATURE_DISABLED' },
    });
    const cmds = ok(await off.gql(LIST, { s: 'PALETTE', c }, sOff.member)).commands as any[];
    expect(cmds.length).toBeGreaterThan(0);
    for (const cmd of cmds) {
      expect(cmd).toMatchObject({ aiCallable: false, nlDescription: null, intentSamples: [] });
    }
  });

  it('refuses an agent’s macro as a whole, and audits it', async () => {
    const macro = ok(
      await off.gql(
        'mutation($i: CreateMacroInput!) { createMacro(input: $i) { id } }',
        { i: { name: 'hello', steps: [{ command: 'me', args: { text: 'hello' } }] } },
        sOff.member,
      ),
    ).createMacro;
    const RUN = `mutation($i: ExecuteMacroInput!) { executeMacro(input: $i) { status } }`;
    const input = { macroId: macro.id, context: { conversationId: sOff.general } };
    const res = await off.gql(RUN, { i: { ...input, initiator: 'AGENT' } }, sOff.member);
    expectCode(res, 'FEATURE_DISABLED');
    expect((await auditRows(off, sOff.member.id)).at(-1)!.d).toMatchObject({
      initiator: 'AGENT',
      command: `macro:${macro.id}`,
      outcome: 'REFUSED',
    });
    expect(ok(await off.gql(RUN, { i: input }, sOff.member)).executeMacro.status).toBe('DONE');
  });

  it('an agent declaring USER passes only the checks a user passes', async () => {
    const c = { serverId: sOff.serverId, conversationId: sOff.general };
    // What the Member may do, it may do.
    expect(
      ok(
        await exec(off, sOff.member, {
          command: 'me',
          args: { text: 'hi' },
          context: c,
          initiator: 'USER',
        }),
      ).executeCommand.status,
    ).toBe('DONE');
    // What the Member may not, it may not; destructive steps still need their confirmation.
    expectCode(
      await exec(off, sOff.member, {
        command: 'kick',
        args: { user: '@victimai' },
        context: c,
        initiator: 'USER',
      }),
      'FORBIDDEN',
    );
    const asked = ok(
      await exec(off, sOff.owner, {
        command: 'kick',
        args: { user: '@victimai' },
        context: c,
        initiator: 'USER',
      }),
    ).executeCommand;
    expect(asked.status).toBe('CONFIRMATION_REQUIRED');
  });
});
