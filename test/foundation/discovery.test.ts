import { createPublicKey, verify } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type TestApp } from '../_util/app.js';

/** Verifies a `{payload, signature}` with a raw base64url Ed25519 key, as a peer would. */
function verifies(rawKey: string, signed: { payload: string; signature: string }): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: rawKey }, format: 'jwk' });
  return verify(
    null,
    Buffer.from(signed.payload, 'utf8'),
    key,
    Buffer.from(signed.signature, 'base64url'),
  );
}

describe('discovery document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SVC_PUBLIC_BASE_URL: 'https://Chat.Example.org:443/some/path',
        SVC_FEATURES_DISABLED: 'custom_emoji',
        SVC_ROLE: 'host',
      },
    });
  });
  afterAll(async () => t?.close());

  it('is public JSON, readable from any origin and cacheable five minutes', async () => {
    const res = await t.inject({
      method: 'GET',
      url: '/.well-known/svc-server',
      headers: { origin: 'https://anywhere.example' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(res.json().svc).toBe('server-discovery');
  });

  it('carries a key log and a descriptor that verify with the server key', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/.well-known/svc-server' })).json();
    expect(Object.keys(doc).sort()).toEqual(['descriptor', 'features', 'keyLog', 'svc']);
    expect(doc.keyLog).toHaveLength(1);
    const entry = JSON.parse(doc.keyLog[0].payload);
    expect(entry).toMatchObject({ type: 'svc.key-log.v1', seq: 0, alg: 'ed25519', prev: null });
    expect(Buffer.from(entry.key, 'base64url')).toHaveLength(32);
    // The first entry is self-signed; the descriptor is signed by the key-log's current key.
    expect(verifies(entry.key, doc.keyLog[0])).toBe(true);
    expect(verifies(entry.key, doc.descriptor)).toBe(true);
    expect(entry.key).toBe(t.ctx.keys.signingPublicRaw);

    const descriptor = JSON.parse(doc.descriptor.payload);
    expect(descriptor).toMatchObject({
      type: 'svc.server-descriptor.v1',
      origin: 'https://chat.example.org',
      serverId: 'chat.example.org',
      key: entry.key,
      roles: ['host'],
      apiVersion: 1,
      version: t.ctx.version,
      s2s: '/s2s/v1/',
    });
    expect(Number.isNaN(Date.parse(descriptor.issuedAt))).toBe(false);

    // A changed byte breaks the signature: the check above is not vacuous.
    const tampered = {
      ...doc.descriptor,
      payload: doc.descriptor.payload.replace('host', 'relay'),
    };
    expect(verifies(entry.key, tampered)).toBe(false);
  });

  it('lists every feature in lower case, with a reason only when unavailable', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/.well-known/svc-server' })).json();
    expect(doc.features).toStrictEqual({
      attachments: { state: 'enabled' },
      link_previews: { state: 'enabled' },
      email: {
        state: 'unavailable',
        reason: expect.stringMatching(/SVC_SMTP_HOST.*SVC_SMTP_FROM/),
      },
      custom_emoji: { state: 'disabled' },
      workspace_plugins: { state: 'enabled' },
      ai_commands: { state: 'enabled' },
    });
    expect(Object.keys(doc.features)).toEqual([
      'attachments',
      'link_previews',
      'email',
      'custom_emoji',
      'workspace_plugins',
      'ai_commands',
    ]);
  });
});
