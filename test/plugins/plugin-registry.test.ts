import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR } from '../../src/auth/actor.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { seedMember, seedWorkspace } from '../moderation/_helpers.js';
import { expectCode, ok, recordEvents, waitFor } from '../workspaces/_helpers.js';

import { bundleBytes, exampleBundleText, exampleVersion } from './_bundles.js';
import { ADD, LIST, REMOVE, UPDATE, uploadBundle } from './_helpers.js';

// The registry (docs/plugins.md, "The registry" and "Contributions"): who may read and change
// it, settings against the bundle's schema, versions, the cap, events, the audit log, and the
// contributions the command system reads.

describe('workspace plugin registry', () => {
  let t: TestApp;
  let owner: Agent;
  let mod: Agent;
  let member: Agent;
  let guest: Agent;
  let stranger: Agent;
  let ws: string;
  let v1: string;
  let v2: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_LIMIT_PLUGINS_PER_WORKSPACE: '2' } });
    [owner, mod, member, guest, stranger] = await Promise.all(
      Array.from({ length: 5 }, () => signUpAndIn(t)),
    );
    ws = (await seedWorkspace(t, owner)).id;
    await seedMember(t, ws, mod, 'moderator');
    await seedMember(t, ws, member, 'member');
    await seedMember(t, ws, guest, 'guest');
    v1 = await uploadBundle(t, owner, ws, Buffer.from(exampleBundleText()));
    v2 = await uploadBundle(
      t,
      owner,
      ws,
      exampleVersion('1.3.0', (b) => {
        b.contributes.commands.push({ name: 'standup-skip', description: 'Skip today' });
        b.contributes.settings.properties.reminderHour.maximum = 12;
      }),
    );
  });
  afterAll(async () => t?.close());

  const contributions = () => t.ctx.services.plugins.contributionsOf(ws);

  it('adds, lists, updates and removes a plugin, announcing and auditing each change', async () => {
    const rec = recordEvents(t, ws);
    const added = ok(
      await t.gql(
        ADD,
        { i: { serverId: ws, bundleSha256: v1, settings: { channel: 'daily' } } },
        mod,
      ),
    ).addWorkspacePlugin;
    expect(added).toMatchObject({
      serverId: ws,
      pluginId: 'com.example.standup',
      name: 'Standup',
      version: '1.2.0',
      enabled: true,
      settings: { channel: 'daily', reminderHour: 9, style: 'short' },
      bundleSha256: v1,
      bundleUrl: `/api/plugin-bundles/${ws}/${v1}`,
      author: { name: 'Example Ltd', email: 'plugins@example.com' },
      addedBy: mod.id,
    });
    expect(added.commands[0]).toEqual({
      name: 'standup',
      description: 'Post your standup update',
      arguments: [
        {
          name: 'yesterday',
          type: 'string',
          description: 'What you did yesterday',
          required: true,
        },
        { name: 'today', type: 'string', description: 'What you will do today', required: true },
        {
          name: 'blocked',
          type: 'boolean',
          description: 'Whether something blocks you',
          required: false,
        },
      ],
      source: { workspacePluginId: added.id, pluginId: 'com.example.standup', version: '1.2.0' },
    });

    // Every member reads the registry, guests too.
    for (const who of [owner, member, guest]) {
      expect(ok(await t.gql(LIST, { s: ws }, who)).workspacePlugins.map((p: any) => p.id)).toEqual([
        added.id,
      ]);
    }

    const moved = ok(
      await t.gql(
        UPDATE,
        { i: { id: added.id, bundleSha256: v2, settings: { channel: 'x', reminderHour: 11 } } },
        owner,
      ),
    ).updateWorkspacePlugin;
    expect(moved).toMatchObject({
      version: '1.3.0',
      bundleSha256: v2,
      settings: { channel: 'x', reminderHour: 11, style: 'short' },
    });
    expect((await contributions()).commands.map((c) => c.name)).toEqual([
      'standup',
      'standup-summary',
      'standup-skip',
    ]);

    const disabled = ok(
      await t.gql(UPDATE, { i: { id: added.id, enabled: false } }, mod),
    ).updateWorkspacePlugin;
    expect(disabled.enabled).toBe(false);
    expect(await contributions()).toEqual({ commands: [], keybinds: [] });

    expect(ok(await t.gql(REMOVE, { id: added.id }, mod)).removeWorkspacePlugin).toEqual({
      id: added.id,
    });
    expect(ok(await t.gql(LIST, { s: ws }, member)).workspacePlugins).toEqual([]);

    await waitFor(() => rec.events.length >= 4);
    rec.stop();
    expect(rec.events.map((e) => [e.type, e.payload.audience])).toEqual([
      ['WorkspacePluginAdded', { kind: 'workspace' }],
      ['WorkspacePluginUpdated', { kind: 'workspace' }],
      ['WorkspacePluginUpdated', { kind: 'workspace' }],
      ['WorkspacePluginRemoved', { kind: 'workspace' }],
    ]);
    expect(rec.events[1]!.payload).toMatchObject({
      changed: ['bundle', 'settings'],
      version: '1.3.0',
      by: owner.id,
    });
    expect(rec.events[2]!.payload).toMatchObject({
      changed: ['enabled'],
      enabled: false,
      by: mod.id,
    });
    expect(JSON.stringify(rec.events)).not.toContain('"channel":"x"');

    const audit = await t.ctx.db.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('target', '=', `workspace:${ws}`)
      .orderBy('createdAt')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => [a.action, a.actorId])).toEqual([
      ['plugin.add', mod.id],
      ['plugin.update', owner.id],
      ['plugin.update', mod.id],
      ['plugin.remove', mod.id],
    ]);
  });

  it('keeps commands and keybinds of enabled plugins only, with their source', async () => {
    const a = ok(
      await t.gql(ADD, { i: { serverId: ws, bundleSha256: v1 } }, owner),
    ).addWorkspacePlugin;
    const c = await contributions();
    expect(c.keybinds).toEqual([
      {
        keys: 'Mod+Shift+U',
        command: 'standup',
        description: 'Open the standup form',
        source: { workspacePluginId: a.id, pluginId: 'com.example.standup', version: '1.2.0' },
      },
    ]);
    // The command line has no membership: the person-facing method refuses it.
    await expect(t.ctx.services.plugins.contributions(CLI_ACTOR, ws)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    ok(await t.gql(REMOVE, { id: a.id }, owner));
    expect(await contributions()).toEqual({ commands: [], keybinds: [] });
  });

  it('lets only Moderators and the owner change it; NOT_FOUND outside the workspace', async () => {
    expectCode(await t.gql(ADD, { i: { serverId: ws, bundleSha256: v1 } }, member), 'FORBIDDEN');
    expectCode(await t.gql(ADD, { i: { serverId: ws, bundleSha256: v1 } }, guest), 'FORBIDDEN');
    expectCode(await t.gql(ADD, { i: { serverId: ws, bundleSha256: v1 } }, stranger), 'NOT_FOUND');
    expectCode(await t.gql(LIST, { s: ws }, stranger), 'NOT_FOUND');
    const a = ok(
      await t.gql(ADD, { i: { serverId: ws, bundleSha256: v1 } }, mod),
    ).addWorkspacePlugin;
    expectCode(await t.gql(UPDATE, { i: { id: a.id, enabled: false } }, member), 'FORBIDDEN');
    expectCode(await t.gql(REMOVE, { id: a.id }, member), 'FORBIDDEN');
    expectCode(await t.gql(REMOVE, { id: a.id }, stranger), 'NOT_FOUND');
    ok(await t.gql(REMOVE, { id: a.id }, mod));
    expectCode(await t.gql(REMOVE, { id: a.id }, mod), 'NOT_FOUND');
  });

  it('refuses bad input with VALIDATION, NOT_FOUND or CONFLICT', async () => {
    const add = (i: Record<string, unknown>) =>
      t.gql(ADD, { i: { serverId: ws, bundleSha256: v1, ...i } }, owner);
    expect(expectCode(await add({ settings: { reminderHour: 30 } }), 'VALIDATION').message).toBe(
      'settings.reminderHour must be at most 23',
    );
    expect(expectCode(await add({ settings: { colour: 'red' } }), 'VALIDATION').message).toBe(
      'settings.colour is not a setting of this plugin',
    );
    expect(expectCode(await add({ settings: 'channel' }), 'VALIDATION').message).toBe(
      'settings must be a JSON object',
    );
    expectCode(await add({ bundleSha256: 'nothex' }), 'VALIDATION');
    expectCode(await add({ bundleSha256: 'a'.repeat(64) }), 'NOT_FOUND');
    const a = ok(await add({})).addWorkspacePlugin;
    expect(expectCode(await add({}), 'CONFLICT').message).toMatch(/already in this workspace/);
    // Settings valid for 1.2.0 (reminder at 20) are refused by 1.3.0's maximum of 12.
    ok(
      await t.gql(UPDATE, { i: { id: a.id, settings: { channel: 'c', reminderHour: 20 } } }, owner),
    );
    expect(
      expectCode(await t.gql(UPDATE, { i: { id: a.id, bundleSha256: v2 } }, owner), 'VALIDATION')
        .message,
    ).toBe('settings.reminderHour must be at most 12');
    const otherPlugin = await uploadBundle(
      t,
      owner,
      ws,
      bundleBytes((b) => (b.id = 'com.example.other')),
    );
    expect(
      expectCode(
        await t.gql(UPDATE, { i: { id: a.id, bundleSha256: otherPlugin } }, owner),
        'VALIDATION',
      ).message,
    ).toMatch(/of the plugin com.example.other/);
    expectCode(await t.gql(UPDATE, { i: { id: a.id } }, owner), 'VALIDATION');
    ok(await t.gql(REMOVE, { id: a.id }, owner));
  });

  it('refuses a plugin past SVC_LIMIT_PLUGINS_PER_WORKSPACE and reports the cap', async () => {
    const shas = [];
    for (const id of ['com.example.a', 'com.example.b', 'com.example.c']) {
      shas.push(
        await uploadBundle(
          t,
          owner,
          ws,
          bundleBytes((b) => (b.id = id)),
        ),
      );
    }
    ok(await t.gql(ADD, { i: { serverId: ws, bundleSha256: shas[0] } }, owner));
    ok(await t.gql(ADD, { i: { serverId: ws, bundleSha256: shas[1] } }, owner));
    const err = expectCode(
      await t.gql(ADD, { i: { serverId: ws, bundleSha256: shas[2] } }, owner),
      'VALIDATION',
    );
    expect(err.message).toBe(
      'limit reached: plugins per workspace is capped at 2 (SVC_LIMIT_PLUGINS_PER_WORKSPACE)',
    );
    const info = ok(await t.gql('{ serverInfo { limits { pluginsPerWorkspace } } }'));
    expect(info.serverInfo.limits.pluginsPerWorkspace).toBe(2);
  });
});
