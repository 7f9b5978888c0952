import {
  PostgresAdapter,
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type Kysely,
  type TableMetadata,
} from 'kysely';

// svc's PostgreSQL dialect: one schema is one instance (tests and tenants share a database, each
// in its own schema), so what Kysely does database-wide is done per schema here.

/**
 * Kysely's PostgreSQL migration lock is one advisory lock for the whole database, so instances in
 * different schemas of one database (tests, several tenants) wait on each other's migrations.
 * This one is keyed by the current schema: processes migrating the same schema still take turns.
 */
class SchemaLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`select pg_advisory_lock(hashtextextended('svc migration ' || current_schema(), 0))`.execute(
      db,
    );
  }

  override async releaseMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`select pg_advisory_unlock(hashtextextended('svc migration ' || current_schema(), 0))`.execute(
      db,
    );
  }
}

/**
 * Tables of the current schema only, by name, read straight from the catalog (what the migrator
 * asks, to know whether its tables exist). Kysely's introspects every table of every schema,
 * which goes wrong twice when the database holds more than this instance: it finds another
 * schema's `kysely_migration` and skips creating its own, and its query fails outright ("schema
 * ... does not exist") when another schema is dropped meanwhile.
 */
class CurrentSchemaIntrospector extends PostgresIntrospector {
  constructor(private readonly db: Kysely<unknown>) {
    super(db);
  }

  override async getTables(): Promise<TableMetadata[]> {
    const result = await sql<{ name: string; schema: string }>`
      select c.relname as name, n.nspname as schema
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p')`.execute(this.db);
    return result.rows.map((r) => ({ ...r, isView: false, columns: [] }));
  }
}

export class SchemaDialect extends PostgresDialect {
  override createAdapter(): PostgresAdapter {
    return new SchemaLockAdapter();
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
