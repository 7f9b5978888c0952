import { sql, SqliteAdapter, type Kysely } from 'kysely';

// Search that understands each language (docs/search.md, "Languages"):
// - `search_language`: the language an account or a workspace writes in, for texts too short
//   to tell;
// - PostgreSQL matches through a `tsvector` made from the terms without parsing
//   (`array_to_tsvector`), whose GIN index answers OR groups, exclusions and prefixes
//   (`deploy*`) as well as plain terms; the array index it replaces answered only "all of";
// - the backfill starts again from the oldest message, so every row gets its stems, compound
//   parts and CJK words. Until a row is rewritten it keeps its exact words: the old index serves
//   exact searches meanwhile (docs/search.md, "Rebuilding").
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('search_language')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('language', 'text', (c) => c.notNull())
    .execute();
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`create index message_search_lexemes_idx on message_search
      using gin (array_to_tsvector(string_to_array(terms, ' ')))`.execute(db);
    await sql`drop index message_search_terms_idx`.execute(db);
  }
  await sql`insert into search_backfill (id, "afterAt", "afterId") values ('messages', null, null)
    on conflict (id) do nothing`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
