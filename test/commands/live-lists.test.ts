import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  recordEvents,
  setRole,
  waitFor,
} from '../workspaces/_helpers.js';

// A workspace's macros and default keybinds are announced to its members (docs/events.md,
// "Workspace macros and keybinds"), so their open pages follow without a reload; a person's own
// publish nothing on the workspace's topic.

const CREATE = 'mutation($i: CreateMacroInput!) { createMacro(input: $i) { id } }';
const DELETE = 'mutation($id: ID!) { deleteMacro(id: $id) }';
const SET = 'mutation($i: SetKeybindInput!) { setKeybind(input: $i) { id } }';
const UNSET = 'mutation($id: ID!) { deleteKeybind(id: $id) }';
const steps = [{ command: 'shrug', args: { text: 'hi' } }];

let t: TestApp;
let owner: Agent, mod: Agent, member: Agent;
let serverId: string;

beforeAll(async () => {
  t = await createTestApp();
  [owner, mod, member] = await Promise.all([0, 1, 2].map(() => signUpAndIn(t)));
  serverId = (await createWorkspace(t, owner, 'Live lists')).id;
  await inviteAndJoin(t, owner, serverId, [mod, member]);
  ok(await setRole(t, owner, serverId, mod.id, 'MODERATOR'));
});
afterAll(async () => t?.close());

describe('live macro and keybind lists', () => {
  it("announces a workspace's macros and keybinds made and deleted to every member", async () => {
    const rec = recordEvents(t, serverId);
    const macroId = ok(await t.gql(CREATE, { i: { serverId, name: 'hello', steps } }, mod))
      .createMacro.id as string;
    const first = ok(await t.gql(SET, { i: { serverId, chord: 'Mod+Alt+H', macroId } }, mod))
      .setKeybind.id as string;
    const second = ok(
      await t.gql(SET, { i: { serverId, chord: 'Mod+Alt+H', command: 'shrug' } }, owner),
    ).setKeybind.id as string;
    expect(ok(await t.gql(UNSET, { id: second }, owner)).deleteKeybind).toBe(true);
    expect(ok(await t.gql(DELETE, { id: macroId }, owner)).deleteMacro).toBe(true);

    await waitFor(() => rec.events.length >= 5);
    rec.stop();
    expect(rec.events.map((e) => [e.type, e.payload.audience, e.payload.serverId])).toEqual([
      ['WorkspaceMacroCreated', { kind: 'workspace' }, serverId],
      ['WorkspaceKeybindSet', { kind: 'workspace' }, serverId],
      ['WorkspaceKeybindSet', { kind: 'workspace' }, serverId],
      ['WorkspaceKeybindDeleted', { kind: 'workspace' }, serverId],
      ['WorkspaceMacroDeleted', { kind: 'workspace' }, serverId],
    ]);
    expect(rec.events.map((e) => e.payload)).toMatchObject([
      { macroId, name: 'hello', by: mod.id },
      { keybindId: first, chord: 'Mod+Alt+H', replacedId: null, by: mod.id },
      { keybindId: second, chord: 'Mod+Alt+H', replacedId: first, by: owner.id },
      { keybindId: second, chord: 'Mod+Alt+H', by: owner.id },
      { macroId, name: 'hello', by: owner.id },
    ]);
  });

  it("publishes nothing for a person's own macros and keybinds, nor for a refused change", async () => {
    const rec = recordEvents(t, serverId);
    const own = ok(await t.gql(CREATE, { i: { name: 'mine', steps } }, member)).createMacro
      .id as string;
    const bind = ok(await t.gql(SET, { i: { chord: 'Mod+Alt+M', macroId: own } }, member))
      .setKeybind.id as string;
    ok(await t.gql(UNSET, { id: bind }, member));
    ok(await t.gql(DELETE, { id: own }, member));
    expectCode(await t.gql(CREATE, { i: { serverId, name: 'nope', steps } }, member), 'FORBIDDEN');
    // A workspace event after them all: once it is heard, anything they had published would be.
    ok(await t.gql(CREATE, { i: { serverId, name: 'marker', steps } }, owner));
    await waitFor(() => rec.events.length >= 1);
    rec.stop();
    expect(rec.events.map((e) => [e.type, e.payload.name])).toEqual([
      ['WorkspaceMacroCreated', 'marker'],
    ]);
  });
});
