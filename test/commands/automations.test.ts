import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DAY_MS, ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { compilePattern, matchPattern } from '../../src/services/commands/pattern.js';
import {
  createTestApp,
  createTestDatabase,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, expectCode, inviteAndJoin, ok, setRole } from '../workspaces/_helpers.js';

import { auditRows, exec, generalOf } from './_helpers.js';

const clock = new ManualClock();
let database: TestDatabase;
let t: TestApp;
let olga: Agent, mona: Agent, mike: Agent, max: Agent;
let serverId: string, general: string;

const CREATE_MACRO = `mutation($i: CreateMacroInput!) { createMacro(input: $i) { id name serverId ownerId params steps { command args } } }`;
const RUN_MACRO = `mutation($i: ExecuteMacroInput!) { executeMacro(input: $i) { status failedStep
  error { code message } confirmation { token summary } steps { status command { name } } } }`;
const SET_KEY = `mutation($i: SetKeybindInput!) { setKeybind(input: $i) { id chord command macroId serverId ownerId } }`;
const KEYS = 'query($s: ID) { keybinds(serverId: $s) { chord command serverId ownerId } }';
const CREATE_PIPE = `mutation($i: CreatePipelineInput!) { createPipeline(input: $i) { id enabled stoppedReason
  trigger { kind pattern } nextRunAt } }`;
const PIPES = 'query($s: ID!) { pipelines(serverId: $s) { id enabled stoppedReason } }';

const textsIn = async (conversationId: string) =>
  (
    await t.ctx.db.kysely
      .selectFrom('message')
      .select('text')
      .where('conversationId', '=', conversationId)
      .orderBy('createdAt')
      .orderBy('id')
      .execute()
  ).map((r) => r.text);

/** Waits for every pipeline trigger in flight, and those they started. */
const idle = () => t.ctx.services.commands.pipelines.idle();

beforeAll(async () => {
  database = await createTestDatabase();
  t = await createTestApp({
    clock,
    database,
    env: { SVC_LIMIT_MACROS_PER_WORKSPACE: '2', SVC_LIMIT_PIPELINES_PER_WORKSPACE: '3' },
  });
  [olga, mona, mike, max] = await Promise.all(
    ['olga', 'mona', 'mike', 'max'].map((u) => signUpAndIn(t, { username: `${u}auto` })),
  );
  serverId = (await createWorkspace(t, olga, 'Automations')).id;
  await inviteAndJoin(t, olga, serverId, [mona, mike, max]);
  ok(await setRole(t, olga, serverId, mona.id, 'MODERATOR'));
  general = await generalOf(t, olga, serverId);
});
afterAll(async () => {
  await t?.close();
  await database.drop();
});

describe('macros', () => {
  it('runs steps in order with parameters, each with its own checks, stopping at the first failure', async () => {
    const macro = ok(
      await t.gql(
        CREATE_MACRO,
        {
          i: {
            name: 'standup',
            params: ['topic'],
            steps: [
              { command: 'topic', args: { topic: 'Standup: {{topic}}' } },
              { command: 'me', args: { text: 'starts the standup about {{topic}}' } },
            ],
          },
        },
        mike,
      ),
    ).createMacro;
    expect(macro).toMatchObject({ ownerId: mike.id, serverId: null, params: ['topic'] });
    const run = ok(
      await t.gql(
        RUN_MACRO,
        {
          i: {
            macroId: macro.id,
            args: { topic: 'release' },
            context: { conversationId: general },
          },
        },
        mike,
      ),
    ).executeMacro;
    expect(run).toMatchObject({ status: 'DONE', failedStep: null });
    expect(run.steps.map((s: any) => s.command.name)).toEqual(['topic', 'me']);
    expect((await textsIn(general)).at(-1)).toBe('_starts the standup about release_');
    const rows = (await auditRows(t, mike.id)).slice(-2);
    expect(rows.map((r) => r.d.initiator)).toEqual(['MACRO', 'MACRO']);
    expect(rows.every((r) => r.d.macroId === macro.id)).toBe(true);
    // A missing parameter names it.
    const bad = await t.gql(
      RUN_MACRO,
      { i: { macroId: macro.id, context: { conversationId: general } } },
      mike,
    );
    expect(bad.body.errors![0]!.extensions!.argument).toBe('topic');
    // Another person's macro is not found.
    expectCode(
      await t.gql(
        RUN_MACRO,
        { i: { macroId: macro.id, args: { topic: 'x' }, context: { conversationId: general } } },
        max,
      ),
      'NOT_FOUND',
    );
  });

  it('stops at a step the person may not run, before anything runs', async () => {
    const macro = ok(
      await t.gql(
        CREATE_MACRO,
        {
          i: {
            name: 'clean',
            steps: [{ command: 'me', args: { text: 'cleans up' } }, { command: 'archive' }],
          },
        },
        mike,
      ),
    ).createMacro;
    const before = (await textsIn(general)).length;
    const run = ok(
      await t.gql(
        RUN_MACRO,
        { i: { macroId: macro.id, context: { conversationId: general } } },
        mike,
      ),
    ).executeMacro;
    expect(run).toMatchObject({
      status: 'FAILED',
      failedStep: 1,
      error: { code: 'FORBIDDEN' },
      steps: [],
    });
    expect((await textsIn(general)).length).toBe(before);
  });

  it('asks one confirmation covering every destructive step', async () => {
    const macro = ok(
      await t.gql(
        CREATE_MACRO,
        {
          i: {
            serverId,
            name: 'quiet',
            params: ['who'],
            steps: [
              { command: 'timeout', args: { user: '{{who}}', duration: '10m' } },
              { command: 'me', args: { text: 'asked for quiet' } },
              { command: 'timeout', args: { user: '@maxauto', duration: '5m' } },
            ],
          },
        },
        mona,
      ),
    ).createMacro;
    const input = {
      macroId: macro.id,
      args: { who: '@mikeauto' },
      context: { conversationId: general },
    };
    const asked = ok(await t.gql(RUN_MACRO, { i: input }, mona)).executeMacro;
    expect(asked.status).toBe('CONFIRMATION_REQUIRED');
    expect(asked.confirmation.summary).toMatch(/time out .*10 minutes; then time out .*5 minutes/);
    const token = asked.confirmation.token;
    expect((await auditRows(t, mona.id)).at(-1)!.d).toMatchObject({
      command: 'macro:quiet',
      args: { who: '@mikeauto' },
      outcome: 'CONFIRMATION_REQUIRED',
      confirmation: 'ISSUED',
      macroId: macro.id,
    });
    // Bound to the arguments.
    expectCode(
      await t.gql(
        RUN_MACRO,
        { i: { ...input, args: { who: '@maxauto' }, confirmationToken: token } },
        mona,
      ),
      'CONFIRMATION_FAILED',
    );
    const done = ok(
      await t.gql(RUN_MACRO, { i: { ...input, confirmationToken: token } }, mona),
    ).executeMacro;
    expect(done.status).toBe('DONE');
    expect(done.steps).toHaveLength(3);
    expectCode(
      await t.gql(RUN_MACRO, { i: { ...input, confirmationToken: token } }, mona),
      'CONFIRMATION_STALE',
    );
    // Members may not create workspace macros; the cap counts the workspace's.
    expectCode(
      await t.gql(CREATE_MACRO, { i: { serverId, name: 'x', steps: [{ command: 'me' }] } }, mike),
      'FORBIDDEN',
    );
    ok(
      await t.gql(CREATE_MACRO, { i: { serverId, name: 'two', steps: [{ command: 'me' }] } }, mona),
    );
    const capped = await t.gql(
      CREATE_MACRO,
      { i: { serverId, name: 'three', steps: [{ command: 'me' }] } },
      mona,
    );
    expectCode(capped, 'VALIDATION');
    expect(capped.body.errors![0]!.message).toMatch(/SVC_LIMIT_MACROS_PER_WORKSPACE/);
  });
});

describe('keybinds', () => {
  it('are stored for the person, with chords checked and made canonical', async () => {
    const k = ok(
      await t.gql(SET_KEY, { i: { chord: 'shift+mod+k', command: '/shrug' } }, mike),
    ).setKeybind;
    expect(k).toMatchObject({ chord: 'Mod+Shift+K', command: 'shrug', ownerId: mike.id });
    for (const chord of ['K', 'Shift+K', 'Hyper+K', 'Mod+Mod+K', 'Mod+Banana', '']) {
      const res = await t.gql(SET_KEY, { i: { chord, command: 'shrug' } }, mike);
      expectCode(res, 'VALIDATION');
      expect(res.body.errors![0]!.extensions!.argument).toBe('chord');
    }
    ok(await t.gql(SET_KEY, { i: { chord: 'F2', command: 'away' } }, mike));
    // Another sign-in of the same person (another device) sees them.
    const again = await (await import('../_util/seed.js')).signIn(t, 'mikeauto');
    const keys = ok(await t.gql(KEYS, {}, again)).keybinds as any[];
    expect(keys.map((x) => x.chord).sort()).toEqual(['F2', 'Mod+Shift+K']);
    // Workspace defaults: staff only, listed to members.
    expectCode(
      await t.gql(SET_KEY, { i: { serverId, chord: 'Alt+P', command: 'pin' } }, mike),
      'FORBIDDEN',
    );
    ok(await t.gql(SET_KEY, { i: { serverId, chord: 'Alt+P', command: 'pin' } }, mona));
    const withDefaults = ok(await t.gql(KEYS, { s: serverId }, mike)).keybinds as any[];
    expect(withDefaults.find((x) => x.chord === 'Alt+P')).toMatchObject({ serverId });
  });
});

describe('pipelines', () => {
  it('match bounded in time: a catastrophic pattern is a glob walk of at most n×m steps', () => {
    const p = compilePattern('(a+)+$*a*a*a*a*a*a*a*a*b');
    const meter = { steps: 0 };
    const text = 'a'.repeat(20_000);
    expect(matchPattern(p, text, meter)).toBe(false);
    expect(meter.steps).toBeLessThanOrEqual((text.length + 1) * (p.tokens.length + 1));
    expect(matchPattern(compilePattern('deploy * to prod'), 'please Deploy v2 to PROD now')).toBe(
      true,
    );
    expect(matchPattern(compilePattern('a\\*b'), 'a*b')).toBe(true);
    expect(matchPattern(compilePattern('a\\*b'), 'axb')).toBe(false);
  });

  it('run on matching messages, but never on their own output', async () => {
    const pipe = ok(
      await t.gql(
        CREATE_PIPE,
        {
          i: {
            serverId,
            name: 'echo',
            trigger: { kind: 'MESSAGE', pattern: 'hello*', channelIds: [general] },
            // Its output matches its own pattern: without the rule it would run forever.
            steps: [{ command: 'me', args: { text: 'hello again, {{text}}' } }],
          },
        },
        mona,
      ),
    ).createPipeline;
    expect(pipe).toMatchObject({ enabled: true, trigger: { kind: 'MESSAGE', pattern: 'hello*' } });
    ok(
      await exec(t, olga, {
        command: 'shrug',
        args: { text: 'hello there' },
        context: { conversationId: general },
      }),
    );
    await idle();
    const echoes = (await textsIn(general)).filter((x) => x?.startsWith('_hello again'));
    expect(echoes).toEqual(['_hello again, hello there ¯\\_(ツ)_/¯_']);
    const row = (await auditRows(t, mona.id)).find((r) => r.d.pipelineId === pipe.id)!;
    expect(row.d).toMatchObject({ initiator: 'PIPELINE', outcome: 'DONE' });
    // A private channel its owner is not in: the pipeline never sees it.
    const secret = ok(
      await t.gql(
        'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
        { i: { serverId, name: 'secret', isPrivate: true } },
        olga,
      ),
    ).createChannel.id as string;
    const wide = ok(
      await t.gql(
        CREATE_PIPE,
        {
          i: {
            serverId,
            name: 'everywhere',
            trigger: { kind: 'MESSAGE', pattern: 'classified*' },
            steps: [{ command: 'me', args: { text: 'saw {{text}}' } }],
          },
        },
        mona,
      ),
    ).createPipeline;
    ok(
      await exec(t, olga, {
        command: 'me',
        args: { text: 'classified plans' },
        context: { conversationId: secret },
      }),
    );
    ok(
      await exec(t, olga, {
        command: 'me',
        args: { text: 'classified lunch' },
        context: { conversationId: general },
      }),
    );
    await idle();
    expect((await textsIn(general)).filter((x) => x?.startsWith('_saw'))).toEqual([
      '_saw _classified lunch__',
    ]);
    expect(await textsIn(secret)).toEqual(['_classified plans_']);
    expect((await auditRows(t, mona.id)).some((r) => JSON.stringify(r.d).includes('plans'))).toBe(
      false,
    );
    for (const id of [pipe.id, wide.id]) {
      ok(await t.gql('mutation($id: ID!) { deletePipeline(id: $id) }', { id }, mona));
    }
  });

  it('refuse destructive steps, and stop with a reason when their owner is demoted', async () => {
    expectCode(
      await t.gql(
        CREATE_PIPE,
        {
          i: {
            serverId,
            name: 'x',
            trigger: { kind: 'MEMBER_JOINED' },
            steps: [{ command: 'kick', args: { user: '{{user}}' } }],
          },
        },
        mona,
      ),
      'VALIDATION',
    );
    const pipe = ok(
      await t.gql(
        CREATE_PIPE,
        {
          i: {
            serverId,
            name: 'topic keeper',
            trigger: { kind: 'SCHEDULE', everyMinutes: 60 },
            channelId: general,
            steps: [{ command: 'topic', args: { topic: 'Kept by a pipeline' } }],
          },
        },
        mona,
      ),
    ).createPipeline;
    clock.advance(61 * MINUTE_MS);
    expect(await t.ctx.scheduler.runOnce('command-pipelines')).toBe(true);
    let ch = await t.ctx.db.kysely
      .selectFrom('conversation')
      .select('topic')
      .where('id', '=', general)
      .executeTakeFirstOrThrow();
    expect(ch.topic).toBe('Kept by a pipeline');
    // A second run at the same moment finds nothing due: the run was claimed.
    expect(await t.ctx.services.commands.pipelines.runDue()).toBe(0);
    // The owner is demoted to guest and removed from the channel's reach; the next run stops it.
    ok(await setRole(t, olga, serverId, mona.id, 'GUEST'));
    clock.advance(61 * MINUTE_MS);
    await t.ctx.scheduler.runOnce('command-pipelines');
    const listed = ok(await t.gql(PIPES, { s: serverId }, olga)).pipelines as any[];
    const stopped = listed.find((p) => p.id === pipe.id);
    expect(stopped.enabled).toBe(false);
    expect(stopped.stoppedReason).toMatch(/its owner may no longer run \/topic/);
    ok(await setRole(t, olga, serverId, mona.id, 'MODERATOR'));
    ch = await t.ctx.db.kysely
      .selectFrom('conversation')
      .select('topic')
      .where('id', '=', general)
      .executeTakeFirstOrThrow();
    expect(ch.topic).toBe('Kept by a pipeline');
  });

  it('are staff-only and capped per workspace', async () => {
    const input = {
      serverId,
      name: 'greeter',
      trigger: { kind: 'MEMBER_JOINED' },
      channelId: general,
      steps: [{ command: 'me', args: { text: 'welcomes {{user}}' } }],
    };
    expectCode(await t.gql(CREATE_PIPE, { i: input }, mike), 'FORBIDDEN');
    ok(await t.gql(CREATE_PIPE, { i: input }, mona));
    // Someone joins: the greeter posts in its channel, as its owner.
    const nina = await signUpAndIn(t, { username: 'ninaauto' });
    await inviteAndJoin(t, olga, serverId, [nina]);
    await idle();
    expect(await textsIn(general)).toContain(`_welcomes ${nina.id}_`);
    ok(await t.gql(CREATE_PIPE, { i: input }, mona));
    const capped = await t.gql(CREATE_PIPE, { i: input }, mona);
    expectCode(capped, 'VALIDATION');
    expect(capped.body.errors![0]!.message).toMatch(/SVC_LIMIT_PIPELINES_PER_WORKSPACE/);
    const bad = await t.gql(
      CREATE_PIPE,
      { i: { ...input, trigger: { kind: 'SCHEDULE', everyMinutes: 1 } } },
      mona,
    );
    expect(bad.body.errors![0]!.extensions!.argument).toBe('trigger.everyMinutes');
  });
});

describe('reminders', () => {
  it('are rows posted by the job when due', async () => {
    const res = ok(
      await exec(t, mike, {
        command: 'remind',
        args: { in: '2h', text: 'water the plants' },
        context: { conversationId: general },
      }),
    );
    expect(res.executeCommand.status).toBe('DONE');
    await t.ctx.scheduler.runOnce('command-reminders');
    expect(await textsIn(general)).not.toContain('⏰ Reminder: water the plants');
    clock.advance(2 * 60 * MINUTE_MS);
    await t.ctx.scheduler.runOnce('command-reminders');
    expect(
      (await textsIn(general)).filter((x) => x === '⏰ Reminder: water the plants'),
    ).toHaveLength(1);
    await t.ctx.scheduler.runOnce('command-reminders');
    expect(
      (await textsIn(general)).filter((x) => x === '⏰ Reminder: water the plants'),
    ).toHaveLength(1);
  });
});

describe('deletion', () => {
  it('workspace deletion removes its macros, keybinds and pipelines; the purge removes personal ones', async () => {
    const count = async (
      table: 'command_macro' | 'command_keybind' | 'command_pipeline',
      col: 'workspaceId' | 'ownerId',
      v: string,
    ) =>
      Number(
        (
          await t.ctx.db.kysely
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where(col, '=', v)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await count('command_macro', 'workspaceId', serverId)).toBeGreaterThan(0);
    expect(await count('command_keybind', 'workspaceId', serverId)).toBeGreaterThan(0);
    expect(await count('command_pipeline', 'workspaceId', serverId)).toBeGreaterThan(0);
    ok(
      await t.gql(
        'mutation($i: DeleteWorkspaceInput!) { deleteWorkspace(input: $i) { deleted } }',
        { i: { serverId, confirmName: 'Automations' } },
        olga,
      ),
    );
    expect(await count('command_macro', 'workspaceId', serverId)).toBe(0);
    expect(await count('command_keybind', 'workspaceId', serverId)).toBe(0);
    expect(await count('command_pipeline', 'workspaceId', serverId)).toBe(0);
    // Mike's personal macros and keybinds stay until his account is purged.
    expect(await count('command_macro', 'ownerId', mike.id)).toBeGreaterThan(0);
    expect(await count('command_keybind', 'ownerId', mike.id)).toBeGreaterThan(0);
    ok(
      await t.gql(
        'mutation($i: RequestAccountDeletionInput!) { requestAccountDeletion(input: $i) { scheduledFor } }',
        { i: { confirmUsername: 'mikeauto' } },
        mike,
      ),
    );
    clock.advance(15 * DAY_MS);
    await t.ctx.services.accountDeletion.purgeDue(clock.now().getTime());
    expect(await count('command_macro', 'ownerId', mike.id)).toBe(0);
    expect(await count('command_keybind', 'ownerId', mike.id)).toBe(0);
  });
});
