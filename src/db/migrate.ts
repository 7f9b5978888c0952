import { Migrator, sql, type MigrationResultSet } from 'kysely';

import type { Db } from './database.js';
import { migrations } from './migrations/index.js';

export const MIGRATION_TABLE = 'kysely_migration';

/**
 * The migrator for `db`. On PostgreSQL the migration tables are named in the connection's
 * current schema: without it Kysely looks for them in every schema of the database, finds
 * another schema's (a second instance, or a parallel test) and then fails on its own.
 */
async function createMigrator(db: Db): Promise<Migrator> {
  let migrationTableSchema: string | undefined;
  if (db.dialect === 'postgres') {
    const result = await sql<{ schema: string }>`select current_schema() as schema`.execute(
      db.kysely,
    );
    migrationTableSchema = result.rows[0]?.schema ?? undefined;
  }
  return new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: `${MIGRATION_TABLE}_lock`,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
}

/** Runs every pending migration; throws when one fails (boot must stop, not limp on). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = await createMigrator(db);
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const err = new Error(
      `migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(
        (result.error as Error).message ?? result.error,
      )}`,
    );
    (err as Error & { cause?: unknown }).cause = result.error;
    throw err;
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Names of migrations this build knows that the database has not recorded yet. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const migrator = await createMigrator(db);
  const all = await migrator.getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
