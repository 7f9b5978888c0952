import { Migrator, sql, type MigrationResultSet } from 'kysely';

import type { Db } from './database.js';
import { migrations } from './migrations/index.js';

export const MIGRATION_TABLE = 'kysely_migration';

/**
 * One statement's limit on the connection that migrates (`svc serve`, `svc migrate`): a migration
 * that builds an index over a large table takes far longer than a request's 3 s, and waiting for
 * another process's migration of the same schema is part of it.
 */
export const MIGRATION_STATEMENT_MS = 15 * 60_000;

/**
 * The migrator for `db`. On PostgreSQL its lock and its look at the tables are the current
 * schema's (postgres/dialect.ts).
 */
function createMigrator(db: Db): Migrator {
  return new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: `${MIGRATION_TABLE}_lock`,
  });
}

/** The migrations recorded in the database, oldest first (none before the first boot). */
async function executedMigrations(db: Db): Promise<string[]> {
  try {
    const rows = await db.kysely
      .selectFrom(MIGRATION_TABLE as never)
      .select(sql<string>`name`.as('name'))
      .execute();
    return rows.map((r) => r.name).sort();
  } catch (err) {
    // No migration table yet: a database nothing has migrated.
    const text = String((err as Error).message);
    if (/no such table|does not exist/.test(text)) return [];
    throw err;
  }
}

/**
 * The migrations a newer release ran on this database, which this build does not know (a rolling
 * upgrade: docs/operations.md). A build runs on such a database without migrating, as its
 * migrations only add to the schema this build knows. Throws when the database is not a newer
 * release's version of this build's schema: a migration it does not know comes before one it
 * does, or one it knows is missing before the newer ones.
 */
export async function newerReleaseMigrations(db: Db): Promise<string[]> {
  const known = knownMigrations();
  const executed = await executedMigrations(db);
  const unknown = executed.filter((name) => !known.includes(name));
  if (unknown.length === 0) return [];
  const last = known[known.length - 1] ?? '';
  const missing = known.filter((name) => !executed.includes(name));
  if (unknown.some((name) => name < last) || missing.length > 0) {
    throw new Error(
      `the database has migrations this build does not know (${unknown.join(', ')})` +
        (missing.length > 0 ? ` and lacks ones it knows (${missing.join(', ')})` : '') +
        ': it was migrated by a different line of releases; run the build that migrated it',
    );
  }
  return unknown;
}

/**
 * Runs every pending migration; throws when one fails (boot must stop, not limp on). Runs none
 * on a database a newer release has migrated (`newerReleaseMigrations`).
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  if ((await newerReleaseMigrations(db)).length > 0) return [];
  const migrator = createMigrator(db);
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
  const migrator = createMigrator(db);
  const all = await migrator.getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** A command other than `serve` or `migrate` found the schema behind this build. */
export class PendingMigrationsError extends Error {
  constructor(readonly pending: readonly string[]) {
    const n = pending.length;
    super(
      `the database has ${n} pending migration${n === 1 ? '' : 's'}; run \`svc migrate\` (or start the server) first`,
    );
    this.name = 'PendingMigrationsError';
  }
}

/** Throws PendingMigrationsError unless every migration of this build has run. */
export async function assertMigrated(db: Db): Promise<void> {
  const pending = await pendingMigrations(db);
  if (pending.length > 0) throw new PendingMigrationsError(pending);
}

/**
 * Runs the migrations up to and including `name` (restore: the schema a backup was taken at,
 * before its rows go in). Throws when this build does not know `name` or one fails.
 */
export async function migrateTo(db: Db, name: string): Promise<void> {
  const migrator = createMigrator(db);
  const known = await migrator.getMigrations();
  if (!known.some((m) => m.name === name)) {
    throw new Error(`this build does not know migration ${name}`);
  }
  const result = await migrator.migrateTo(name);
  if (result.error) {
    throw new Error(`migration failed: ${String((result.error as Error).message ?? result.error)}`);
  }
}

/** The names of every migration this build has, oldest first. */
export function knownMigrations(): string[] {
  return Object.keys(migrations).sort();
}
