import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';

import { MIGRATION_TABLE, knownMigrations } from '../../src/db/migrate.js';
import { createLogger } from '../../src/logger.js';
import { migrateDatabase } from '../../src/main.js';
import {
  configFor,
  createTestApp,
  createTestDatabase,
  openTestDb,
  secretsFor,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';

// A rolling upgrade (docs/operations.md): a node of the newer release migrates the database while
// nodes of this release serve, and one of them may restart before it is replaced. It must start
// on the newer schema without migrating, since a release's migrations only add; a database from
// another line of releases is refused in words.

/** Records `name` as run, as a release with that migration would. */
async function recordMigration(database: TestDatabase, name: string) {
  const db = openTestDb(database);
  try {
    await sql`insert into ${sql.table(MIGRATION_TABLE)} (name, timestamp)
      values (${name}, ${new Date().toISOString()})`.execute(db.kysely);
  } finally {
    await db.close();
  }
}

describe(`a database a newer release migrated (${TEST_DB})`, () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('starts this build without migrating, says so, and serves', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const config = configFor(database);
    const secrets = secretsFor(database);
    expect(await migrateDatabase(config, secrets)).toEqual(knownMigrations());
    const newer = `${knownMigrations().at(-1)!.slice(0, 4)}9-from-a-newer-release`;
    expect(newer > knownMigrations().at(-1)!).toBe(true);
    await recordMigration(database, newer);

    const lines: string[] = [];
    const log = createLogger('info', { write: (s: string) => void lines.push(s) });
    expect(await migrateDatabase(config, secrets, { log })).toEqual([]);
    const warning = lines.map((l) => JSON.parse(l) as { msg: string; migrations?: string[] });
    expect(warning.find((l) => /newer release has migrated/.test(l.msg))?.migrations).toEqual([
      newer,
    ]);

    // The context (which refuses pending migrations) opens, and the server answers.
    const t = await createTestApp({ database });
    try {
      const res = await t.gql('{ serverInfo { apiVersion } }');
      expect(res.body.errors).toBeUndefined();
      const ready = await t.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('refuses a database whose unknown migration comes before ones this build knows', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const config = configFor(database);
    const secrets = secretsFor(database);
    await migrateDatabase(config, secrets);
    await recordMigration(database, '0001a-from-another-line');
    await expect(migrateDatabase(config, secrets)).rejects.toThrow(
      /does not know \(0001a-from-another-line\).*different line of releases/,
    );
  });
});
