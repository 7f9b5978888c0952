import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

import { migrateToLatest, MIGRATION_TABLE, pendingMigrations } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { cli } from '../cli/cli-io.js';
import {
  createTestApp,
  createTestDatabase,
  PG_URL,
  startTestServer,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';

/** Polls until `check` holds, failing after `ms` (a deadline, not a speed assertion). */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs one step of a test, failing with its name if it has not ended after `ms`, so a step that
 * hangs says which it was instead of the whole test's timeout.
 */
async function step<T>(name: string, run: () => Promise<T>, ms = 8_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`step not ended in ${ms} ms: ${name}`)), ms);
  });
  try {
    return await Promise.race([run(), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('databases', () => {
  let database: TestDatabase;
  afterAll(async () => database?.drop());

  it(`runs on ${TEST_DB} and records every migration at boot`, async () => {
    database = await createTestDatabase();
    const t = await createTestApp({ database });
    try {
      expect(t.ctx.db.dialect).toBe(TEST_DB);
      const rows = await t.ctx.db.kysely
        .selectFrom(MIGRATION_TABLE as never)
        .select(sql<string>`name`.as('name'))
        .orderBy(sql`name`)
        .execute();
      expect(rows.map((r) => r.name)).toEqual(Object.keys(migrations));
      expect(await pendingMigrations(t.ctx.db)).toEqual([]);
      // Booting again applies nothing.
      expect(await migrateToLatest(t.ctx.db)).toEqual([]);
      if (t.ctx.db.dialect === 'sqlite') {
        const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(
          t.ctx.db.kysely,
        );
        expect(mode.rows[0]?.journal_mode).toBe('wal');
      }
    } finally {
      await t.close();
    }
    const again = await createTestApp({ database });
    try {
      expect(await pendingMigrations(again.ctx.db)).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it.runIf(TEST_DB === 'postgres')(
    'keeps its migration tables in its own schema when another schema has some',
    async () => {
      const decoy = `decoy_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        await client.query(`create schema ${decoy}`);
        await client.query(
          `create table ${decoy}.${MIGRATION_TABLE} (name varchar(255) primary key, timestamp varchar(255) not null)`,
        );
        await client.query(
          `create table ${decoy}.${MIGRATION_TABLE}_lock (id varchar(255) primary key, is_locked integer not null default 0)`,
        );
        const t = await createTestApp();
        try {
          expect(await pendingMigrations(t.ctx.db)).toEqual([]);
        } finally {
          await t.close();
        }
      } finally {
        await client.query(`drop schema if exists ${decoy} cascade`);
        await client.end();
      }
    },
  );

  it('lets the CLI change the database of a running server, which picks it up', async () => {
    const server = await step('start the server', () =>
      startTestServer({ overrides: { ipBlockRefreshMs: 100 } }),
    );
    const env = server.database.env;
    try {
      const sdl = () => fetch(`${server.url}/api/sdl`).then((r) => r.status);
      expect(await step('read the SDL', sdl)).toBe(200);

      const block = await step('svc ip block', () =>
        cli(['ip', 'block', '127.0.0.1', '--reason', 'test'], env),
      );
      expect(block.err).not.toMatch(/^svc:/m);
      expect(block.code).toBe(0);
      expect(JSON.parse(block.out)).toMatchObject({ cidr: '127.0.0.1/32', createdBy: 'cli' });
      // The server rereads the deny list on its own and refuses this address (the test's).
      await step('refused', () => eventually(async () => (await sdl()) === 403), 12_000);
      expect((await step('healthz', () => fetch(`${server.url}/healthz`))).status).toBe(200);

      const list = await step('svc ip list', () => cli(['ip', 'list'], env));
      expect(JSON.parse(list.out).map((b: { cidr: string }) => b.cidr)).toEqual(['127.0.0.1/32']);

      expect(
        (await step('svc ip unblock', () => cli(['ip', 'unblock', '127.0.0.1'], env))).code,
      ).toBe(0);
      await step('served again', () => eventually(async () => (await sdl()) === 200), 12_000);
    } finally {
      await step('stop the server', () => server.stop());
    }
  });
});
