import fs from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import {
  agentHeaders,
  createTestApp,
  createTestDatabase,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { signIn, signUpAndIn } from '../_util/seed.js';
import { createWorkspace, expectCode, ok } from '../workspaces/_helpers.js';

import { exampleBundleText, exampleVersion } from './_bundles.js';
import { ADD, BUNDLE_TYPE, LIST, REMOVE, UPDATE, uploadBundle } from './_helpers.js';

// The feature switch deletes nothing (contract: Optional instance features, rules 2 and 6) and
// workspace deletion removes the registry and bundles, the blobs with the next sweep once no
// row names them (docs/plugins.md, "Feature switch and deletion").

const OFF = { SVC_FEATURES_DISABLED: 'workspace_plugins' };

describe('workspace plugins across the feature switch and workspace deletion', () => {
  let database: TestDatabase | null = null;
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.close();
    await database?.drop();
    t = null;
    database = null;
  });

  it('answers FEATURE_DISABLED everywhere while off, deletes nothing, and is back when on', async () => {
    database = await createTestDatabase();
    t = await createTestApp({ database });
    const owner = await signUpAndIn(t);
    const ws = await createWorkspace(t, owner, 'plugins-on-off');
    const sha = await uploadBundle(t, owner, ws.id, Buffer.from(exampleBundleText()));
    const entry = ok(
      await t.gql(ADD, { i: { serverId: ws.id, bundleSha256: sha } }, owner),
    ).addWorkspacePlugin;
    await t.close();

    t = await createTestApp({ database, env: OFF });
    const off: Agent = await signIn(t, owner.username, undefined, owner.id);
    const refusal = {
      error: expect.any(String),
      code: 'FEATURE_DISABLED',
      feature: 'workspace_plugins',
    };
    const up = await t.inject({
      method: 'POST',
      url: `/api/plugin-bundles/${ws.id}`,
      headers: { 'content-type': BUNDLE_TYPE, ...agentHeaders(off) },
      payload: exampleVersion('9.0.0'),
    });
    expect([up.statusCode, up.json()]).toEqual([403, refusal]);
    const down = await t.inject({
      method: 'GET',
      url: `/api/plugin-bundles/${ws.id}/${sha}`,
      headers: agentHeaders(off),
    });
    expect([down.statusCode, down.json()]).toEqual([403, refusal]);
    for (const [query, vars] of [
      [LIST, { s: ws.id }],
      [ADD, { i: { serverId: ws.id, bundleSha256: sha } }],
      [UPDATE, { i: { id: entry.id, enabled: false } }],
      [REMOVE, { id: entry.id }],
    ] as const) {
      const err = expectCode(await t.gql(query, vars, off), 'FEATURE_DISABLED');
      expect(err.extensions!.feature).toBe('workspace_plugins');
    }
    expect(await t.ctx.services.plugins.contributionsOf(ws.id)).toEqual({
      commands: [],
      keybinds: [],
    });
    // Nothing stored goes while the feature is off.
    expect(await t.ctx.db.kysely.selectFrom('workspace_plugin').selectAll().execute()).toHaveLength(
      1,
    );
    await t.close();

    t = await createTestApp({ database });
    const on = await signIn(t, owner.username, undefined, owner.id);
    const listed = ok(await t.gql(LIST, { s: ws.id }, on)).workspacePlugins;
    expect(listed.map((p: any) => [p.id, p.enabled, p.bundleSha256])).toEqual([
      [entry.id, true, sha],
    ]);
    const res = await t.inject({
      method: 'GET',
      url: listed[0].bundleUrl,
      headers: agentHeaders(on),
    });
    expect(res.body).toBe(exampleBundleText());
    expect((await t.ctx.services.plugins.contributionsOf(ws.id)).commands).toHaveLength(2);
  });

  it('deletes the registry and bundles with the workspace; the sweep removes blobs no one names', async () => {
    const clock = new ManualClock(Date.now());
    t = await createTestApp({ clock });
    const owner = await signUpAndIn(t);
    const gone = await createWorkspace(t, owner, 'plugins-gone');
    const kept = await createWorkspace(t, owner, 'plugins-kept');
    const shared = Buffer.from(exampleBundleText());
    const only = exampleVersion('5.0.0');
    const sharedSha = await uploadBundle(t, owner, gone.id, shared);
    await uploadBundle(t, owner, kept.id, shared);
    const onlySha = await uploadBundle(t, owner, gone.id, only);
    ok(await t.gql(ADD, { i: { serverId: gone.id, bundleSha256: onlySha } }, owner));

    ok(
      await t.gql(
        'mutation($i: DeleteWorkspaceInput!) { deleteWorkspace(input: $i) { deleted } }',
        { i: { serverId: gone.id, confirmName: 'plugins-gone' } },
        owner,
      ),
    );
    const db = t.ctx.db.kysely;
    expect(
      await db
        .selectFrom('workspace_plugin')
        .where('workspaceId', '=', gone.id)
        .selectAll()
        .execute(),
    ).toEqual([]);
    expect(
      await db.selectFrom('plugin_bundle').where('workspaceId', '=', gone.id).selectAll().execute(),
    ).toEqual([]);

    const blobs = t.ctx.services.files.blobs;
    clock.advance(2 * HOUR_MS);
    await t.ctx.services.files.sweep();
    expect(fs.existsSync(blobs.pathOf(onlySha))).toBe(false);
    // The other workspace still has the same bytes.
    expect(fs.existsSync(blobs.pathOf(sharedSha))).toBe(true);
    const res = await t.inject({
      method: 'GET',
      url: `/api/plugin-bundles/${kept.id}/${sharedSha}`,
      headers: agentHeaders(owner),
    });
    expect(res.rawPayload.equals(shared)).toBe(true);
  });

  it('holds at most the built-in 100 plugins when SVC_LIMIT_PLUGINS_PER_WORKSPACE is unset', async () => {
    t = await createTestApp();
    const owner = await signUpAndIn(t);
    const ws = await createWorkspace(t, owner, 'plugins-full');
    const add = async (n: number) => {
      const bytes = Buffer.from(
        exampleBundleText().replace('com.example.standup', `com.example.p${n}`),
      );
      const sha = await uploadBundle(t!, owner, ws.id, bytes);
      return t!.gql(ADD, { i: { serverId: ws.id, bundleSha256: sha } }, owner);
    };
    for (let n = 0; n < 100; n++) ok(await add(n));
    const err = expectCode(await add(100), 'VALIDATION');
    expect(err.message).toBe(
      'limit reached: plugins per workspace is capped at 100 (the built-in maximum; SVC_LIMIT_PLUGINS_PER_WORKSPACE can lower it)',
    );
  });
});
