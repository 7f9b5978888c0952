import { sql, SqliteAdapter, type Kysely } from 'kysely';

// SQLite: the FTS5 index stops keeping each row's size (`columnsize=0`). FTS5 keeps it in a table
// of its own (`message_search_fts_docsize`) for its ranking functions (bm25), which svc does not
// use: relevance is svc's own, the same on both databases (services/search/relevance.ts). Each
// index row cost that table's insert too: 49–52 µs a row in transactions of 256 on a table of
// 200,000 rows, 32–40 without it (docs/search.md, "Scale"), and 8% of the file. The table is
// made again without the sizes and FTS5 rebuilds it from `message_search`, the rows it already
// indexes (about a minute a million rows here); the triggers that keep it in step (migrations
// 0011, 0027) name it only and stay. PostgreSQL is unchanged.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  await sql`drop table message_search_fts`.execute(db);
  await sql`create virtual table message_search_fts using fts5(
    terms, content='message_search', content_rowid='doc', tokenize='ascii', detail='none',
    columnsize=0
  )`.execute(db);
  await sql`insert into message_search_fts(message_search_fts) values ('rebuild')`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
