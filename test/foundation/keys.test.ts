import { verify, createPublicKey } from 'node:crypto';

import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

import { migrateToLatest } from '../../src/db/migrate.js';
import { systemClock } from '../../src/lib/clock.js';
import { loadOrCreateServerKeys, signBytes } from '../../src/services/instance/server-keys.js';
import {
  createTestApp,
  createTestDatabase,
  openTestDb,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';
import { until } from '../_util/until.js';

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

  // Two nodes started together on an empty database (deploy/compose.yaml): both find no instance
  // row before either writes one. A lock held here on the table lets both read and keeps both
  // inserts waiting; released, one makes the keys and the other boots with them. PostgreSQL
  // only: SQLite has one writer, in one process.
  it.skipIf(TEST_DB !== 'postgres')(
    `are made once when two processes boot on the same empty database together${TEST_DB === 'postgres' ? '' : ' (skipped: PostgreSQL only)'}`,
    async () => {
      const database = await createTestDatabase();
      const [a, b] = [openTestDb(database), openTestDb(database)];
      const holder = new pg.Client({ connectionString: database.env.SVC_DATABASE_URL });
      try {
        await migrateToLatest(a);
        await holder.connect();
        await holder.query('begin');
        await holder.query('lock table instance in share mode');
        const booting = Promise.all([a, b].map((db) => loadOrCreateServerKeys(db, systemClock)));
        const waiting = async () =>
          (
            await holder.query(
              `select count(*)::int as n from pg_locks l join pg_class c on c.oid = l.relation
               where c.relname = 'instance' and c.relnamespace = $1::regnamespace and not l.granted`,
              [database.pgSchema],
            )
          ).rows[0].n === 2;
        await until(waiting, 'both inserts waiting', 20_000);
        await holder.query('commit');
        const [first, second] = await booting;
        expect(first!.signingPublicRaw).toBe(second!.signingPublicRaw);
      } finally {
        await holder.end();
        await Promise.all([a.close(), b.close()]);
        await database.drop();
      }
    },
  );
});
