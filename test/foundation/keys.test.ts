import { verify, createPublicKey } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { signBytes } from '../../src/services/instance/server-keys.js';
import { createTestApp, createTestDatabase, type TestDatabase } from '../_util/app.js';

async function discoveryKey(t: Awaited<ReturnType<typeof createTestApp>>): Promise<string> {
  const res = await t.inject({ method: 'GET', url: '/.well-known/svc-server' });
  return JSON.parse(res.json().descriptor.payload).key as string;
}

describe('server keys', () => {
  let database: TestDatabase;
  afterAll(async () => database?.drop());

  it('are created on first boot and reused after a restart', async () => {
    database = await createTestDatabase();
    const first = await createTestApp({ database });
    const key = await discoveryKey(first);
    const rows = await first.ctx.db.kysely
      .selectFrom('server_key')
      .select(['kind', 'publicKey'])
      .orderBy('kind')
      .execute();
    // The Web Push VAPID pair is kept with them (docs/notifications.md).
    expect(rows.map((r) => r.kind)).toEqual(['cookie', 'franking', 'signing', 'vapid']);
    const vapid = first.ctx.services.webPush.publicKey;
    await first.close();

    const second = await createTestApp({ database });
    try {
      expect(await discoveryKey(second)).toBe(key);
      expect(second.ctx.services.webPush.publicKey).toBe(vapid);
      // The published raw key is the stored one, and it verifies what the server signs.
      const raw = Buffer.from(key, 'base64url');
      expect(raw).toHaveLength(32);
      const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key }, format: 'jwk' });
      const data = Buffer.from('probe');
      expect(
        verify(null, data, pub, Buffer.from(signBytes(second.ctx.keys, data), 'base64url')),
      ).toBe(true);
    } finally {
      await second.close();
    }
  });

  it.each([
    ['signing', 'serverKey', /signing key/],
    ['franking', 'frankingKey', /franking key/],
  ] as const)(
    'a lost %s key fails /readyz with a reason naming it, and stops the next boot',
    async (kind, check, reason) => {
      const db = await createTestDatabase();
      const t = await createTestApp({ database: db });
      try {
        await t.ctx.db.kysely.deleteFrom('server_key').where('kind', '=', kind).execute();
        const res = await t.inject({ method: 'GET', url: '/readyz' });
        expect(res.statusCode).toBe(503);
        const body = res.json();
        expect(body.status).toBe('fail');
        expect(body.checks[check].status).toBe('fail');
        expect(body.checks[check].reason).toMatch(reason);
      } finally {
        await t.close();
      }
      // Never silently re-created: a restart refuses to boot with the same reason.
      await expect(createTestApp({ database: db })).rejects.toThrow(reason);
      await db.drop();
    },
  );
});
