import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('answers serverInfo anonymously and me once signed in', async () => {
    const info = await t.gql('{ serverInfo { version apiVersion features { key state reason } } }');
    expect(info.body.data?.serverInfo.apiVersion).toBe(1);
    expect(info.body.data?.serverInfo.features.map((f: { key: string }) => f.key)).toEqual([
      'attachments',
      'link_previews',
      'email',
      'custom_emoji',
      'workspace_plugins',
      'ai_commands',
    ]);
    const anon = await t.gql('{ me { id } }');
    expect(anon.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const alice = await signUpAndIn(t, { username: 'alice' });
    const me = await t.gql('{ me { id username instanceOperator } }', {}, alice);
    expect(me.body.data?.me).toEqual({ id: alice.id, username: 'alice', instanceOperator: false });
    const ping = await t.gql('mutation { ping }', {}, alice);
    expect(ping.body.data?.ping).toBe(true);
    const noCsrf = await t.gql('mutation { ping }', {}, { ...alice, csrfToken: 'nope' });
    expect(noCsrf.body.errors?.[0]?.message).toMatch(/csrf/);
    expect(noCsrf.body.errors?.[0]?.extensions?.code).toBeUndefined();
  });
});
