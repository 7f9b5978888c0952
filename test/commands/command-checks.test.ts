import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createTestApp,
  createTestDatabase,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { bundleBytes } from '../plugins/_bundles.js';
import { ADD, uploadBundle } from '../plugins/_helpers.js';
import { createWorkspace, expectCode, inviteAndJoin, ok } from '../workspaces/_helpers.js';

import { auditRows, exec, generalOf } from './_helpers.js';

// Commands refuse what they should, where they should (issue 40, item 4): argument types and
// ranges before any confirmation, commands that do not exist at keybind and macro creation, and
// with ai_commands off, agent refusals audited in the workspace and no AI surface offered.

let dbOn: TestDatabase, dbOff: TestDatabase;
let on: TestApp, off: TestApp;

const CREATE_MACRO = `mutation($i: CreateMacroInput!) { createMacro(input: $i) { id } }`;
const SET_KEY = `mutation($i: SetKeybindInput!) { setKeybind(input: $i) { id command } }`;
const LIST = `query($s: CommandSurface!, $c: CommandContextInput) {
  commands(surface: $s, context: $c) { name surfaces aiCallable } }`;

async function seed(t: TestApp, tag: string) {
  const owner = await signUpAndIn(t, { username: `owner${tag}` });
  const member = await signUpAndIn(t, { username: `member${tag}` });
  const serverId = (await createWorkspace(t, owner, `Checks ${tag}`)).id;
  await inviteAndJoin(t, owner, serverId, [member]);
  const general = await generalOf(t, owner, serverId);
  return { owner, member, serverId, general };
}

let a: Awaited<ReturnType<typeof seed>>, b: Awaited<ReturnType<typeof seed>>;

beforeAll(async () => {
  dbOn = await createTestDatabase();
  dbOff = await createTestDatabase();
  on = await createTestApp({ database: dbOn });
  off = await createTestApp({ database: dbOff, env: { SVC_FEATURES_DISABLED: 'ai_commands' } });
  a = await seed(on, 'chk');
  b = await seed(off, 'off');
});
afterAll(async () => {
  await on?.close();
  await off?.close();
  await dbOn.drop();
  await dbOff.drop();
});

const confirmationsIssued = () =>
  on.ctx.db.kysely.selectFrom('command_confirmation').select('tokenHash').execute();

/** VALIDATION naming `argument` in its message's start and its extension. */
function expectArgument(res: Awaited<ReturnType<TestApp['gql']>>, argument: string) {
  const err = expectCode(res, 'VALIDATION');
  expect(err.message.startsWith(`${argument}:`), err.message).toBe(true);
  expect(err.extensions!.argument).toBe(argument);
}

describe('arguments checked against their types and ranges', () => {
  it('refuses a value of the wrong type, naming the argument, and posts nothing', async () => {
    const c = { serverId: a.serverId, conversationId: a.general };
    const before = await on.ctx.db.kysely.selectFrom('message').select('id').execute();
    expectArgument(
      await exec(on, a.member, { command: 'me', args: { text: 12 }, context: c }),
      'text',
    );
    expectArgument(
      await exec(on, a.member, { command: 'me', args: { text: true }, context: c }),
      'text',
    );
    expectArgument(
      await exec(on, a.member, { command: 'remind', args: { in: 10, text: 'x' }, context: c }),
      'in',
    );
    expectArgument(
      await exec(on, a.member, { command: 'rename', args: { name: ['x'] }, context: c }),
      'name',
    );
    const after = await on.ctx.db.kysely.selectFrom('message').select('id').execute();
    expect(after.length).toBe(before.length);
    // The text form still gives words, and numbers and booleans still take their text.
    ok(await exec(on, a.member, { command: 'me', text: '12', context: c }));
  });

  it('refuses a destructive command out of range before issuing a confirmation', async () => {
    const c = { serverId: a.serverId };
    const issued = (await confirmationsIssued()).length;
    for (const duration of ['29d', '5w', '40321m']) {
      expectArgument(
        await exec(on, a.owner, {
          command: 'timeout',
          args: { user: '@memberchk', duration },
          context: c,
        }),
        'duration',
      );
    }
    expectArgument(
      await exec(on, a.owner, { command: 'timeout', text: '@memberchk 29d', context: c }),
      'duration',
    );
    expectArgument(
      await exec(on, a.owner, {
        command: 'timeout',
        args: { user: 12, duration: '1h' },
        context: c,
      }),
      'user',
    );
    expect((await confirmationsIssued()).length).toBe(issued);
    // The bound itself is accepted: a confirmation is issued for 28 days.
    const asked = ok(
      await exec(on, a.owner, {
        command: 'timeout',
        args: { user: '@memberchk', duration: '28d' },
        context: c,
      }),
    ).executeCommand;
    expect(asked.status).toBe('CONFIRMATION_REQUIRED');
    expect(asked.confirmation.summary).toBe('time out @memberchk for 40320 minutes');
  });

  it('says the range of a reminder before storing it', async () => {
    const c = { serverId: a.serverId, conversationId: a.general };
    const res = await exec(on, a.member, {
      command: 'remind',
      args: { in: '400d', text: 'x' },
      context: c,
    });
    expectArgument(res, 'in');
    expect(res.body.errors![0]!.message).toBe('in: must be from 1 minute to 365 days');
  });
});

describe('keybinds and macros name commands that exist', () => {
  it('refuses an unknown command at creation, naming the command or the step', async () => {
    expectArgument(
      await on.gql(SET_KEY, { i: { chord: 'Mod+Shift+Y', command: 'no-such-command' } }, a.member),
      'command',
    );
    expectArgument(
      await on.gql(
        SET_KEY,
        { i: { serverId: a.serverId, chord: 'Mod+Shift+Y', command: 'nope' } },
        a.owner,
      ),
      'command',
    );
    expectArgument(
      await on.gql(
        CREATE_MACRO,
        { i: { name: 'typo', steps: [{ command: 'me', args: {} }, { command: 'shurg' }] } },
        a.member,
      ),
      'steps[1].command',
    );
    expectArgument(
      await on.gql(
        CREATE_MACRO,
        { i: { serverId: a.serverId, name: 'typo', steps: [{ command: 'standup' }] } },
        a.owner,
      ),
      'steps[0].command',
    );
    // A non-member learns nothing of a workspace's commands.
    expectCode(
      await on.gql(
        CREATE_MACRO,
        { i: { serverId: a.serverId, name: 'typo', steps: [{ command: 'nope' }] } },
        await signUpAndIn(on, { username: 'strangerchk' }),
      ),
      'NOT_FOUND',
    );
    ok(await on.gql(SET_KEY, { i: { chord: 'Mod+Shift+Y', command: '/Shrug' } }, a.member));
  });

  it('accepts a plugin command of the workspace, and of a workspace of a personal one', async () => {
    const sha = await uploadBundle(on, a.owner, a.serverId, bundleBytes());
    ok(await on.gql(ADD, { i: { serverId: a.serverId, bundleSha256: sha } }, a.owner));
    ok(
      await on.gql(
        CREATE_MACRO,
        { i: { serverId: a.serverId, name: 'daily', steps: [{ command: 'standup' }] } },
        a.owner,
      ),
    );
    ok(await on.gql(SET_KEY, { i: { chord: 'Mod+Alt+S', command: 'standup' } }, a.member));
    expectArgument(
      await on.gql(
        CREATE_MACRO,
        { i: { name: 'daily', steps: [{ command: 'standup', plugin: 'com.example.other' }] } },
        a.member,
      ),
      'steps[0].command',
    );
  });
});

describe('ai_commands off', () => {
  it('audits a refused agent run in the workspace it would have run in', async () => {
    const res = await exec(off, b.member, {
      command: 'me',
      args: { text: 'waves' },
      context: { conversationId: b.general },
      initiator: 'AGENT',
    });
    expectCode(res, 'FEATURE_DISABLED');
    const row = (await auditRows(off, b.member.id)).at(-1)!;
    expect(row.target).toBe(`workspace:${b.serverId}`);
    expect(row.d).toMatchObject({
      initiator: 'AGENT',
      command: 'me',
      outcome: 'REFUSED',
      error: { code: 'FEATURE_DISABLED' },
      context: { serverId: b.serverId, conversationId: b.general },
    });
    // The workspace's moderators see it.
    const audit = ok(
      await off.gql(
        'query($s: ID!) { commandAudit(serverId: $s) { entries { actorId errorCode initiator } } }',
        { s: b.serverId },
        b.owner,
      ),
    ).commandAudit.entries as any[];
    expect(audit[0]).toMatchObject({
      actorId: b.member.id,
      errorCode: 'FEATURE_DISABLED',
      initiator: 'AGENT',
    });
  });

  it('audits a refused agent macro in its workspace', async () => {
    const macro = ok(
      await off.gql(
        CREATE_MACRO,
        {
          i: {
            serverId: b.serverId,
            name: 'wave',
            steps: [{ command: 'me', args: { text: 'hi' } }],
          },
        },
        b.owner,
      ),
    ).createMacro;
    const res = await off.gql(
      `mutation($i: ExecuteMacroInput!) { executeMacro(input: $i) { status } }`,
      { i: { macroId: macro.id, context: { conversationId: b.general }, initiator: 'AGENT' } },
      b.member,
    );
    expectCode(res, 'FEATURE_DISABLED');
    expect((await auditRows(off, b.member.id)).at(-1)!.target).toBe(`workspace:${b.serverId}`);
  });

  it('offers no command on the AI surface', async () => {
    const c = { serverId: b.serverId, conversationId: b.general };
    const cmds = ok(await off.gql(LIST, { s: 'PALETTE', c }, b.owner)).commands as any[];
    expect(cmds.length).toBeGreaterThan(5);
    for (const cmd of cmds) expect(cmd.surfaces).not.toContain('AI');
    const onCmds = ok(
      await on.gql(
        LIST,
        { s: 'PALETTE', c: { serverId: a.serverId, conversationId: a.general } },
        a.owner,
      ),
    ).commands as any[];
    expect(onCmds.find((x) => x.name === 'me').surfaces).toContain('AI');
  });
});
