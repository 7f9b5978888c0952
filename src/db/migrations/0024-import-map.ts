import type { Kysely } from 'kysely';

// `svc import` (docs/operations.md, "Importing"): what each source item became, so a second run
// of the same import changes nothing and a run cut short goes on where it stopped.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('import_map')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('sourceId', 'text', (c) => c.notNull())
    .addColumn('targetId', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_map_pk', ['source', 'kind', 'sourceId'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
