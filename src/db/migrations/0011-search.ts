import { sql, SqliteAdapter, type Kysely } from 'kysely';

import { MS } from './helpers.js';

// The message search index (docs/search.md, "How the index is stored"). The server's tokenizer
// writes the terms; each database only finds rows holding every term of a query, so both give
// the same answers. The table and its index differ by dialect, which is why this migration is
// written in SQL: SQLite keeps an FTS5 table over the terms, PostgreSQL a GIN index over them as
// an array. Messages already sent are indexed afterwards in short batches while the server runs,
// by the `search-backfill` job from the position kept in `search_backfill` (or at once by
// `svc search reindex`; docs/search.md, "Rebuilding").
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('search_backfill')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('afterAt', MS)
    .addColumn('afterId', 'text')
    .execute();
  await sql`insert into search_backfill (id, "afterAt", "afterId") values ('messages', null, null)`.execute(
    db,
  );
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    // SQLite only: `doc` is the FTS5 rowid. An INTEGER PRIMARY KEY keeps it stable across VACUUM.
    await sql`create table message_search (
      doc integer primary key,
      "messageId" text not null unique references message(id) on delete cascade,
      terms text not null
    )`.execute(db);
    // The `ascii` tokenizer splits only on ASCII non-alphanumerics and keeps every other code
    // point: each pre-made term (letters, digits, marks and CJK; ASCII only as a-z and 0-9) is
    // one token, unchanged. `detail=none`: no positions, since matching is by term alone.
    await sql`create virtual table message_search_fts using fts5(
      terms, content='message_search', content_rowid='doc', tokenize='ascii', detail='none'
    )`.execute(db);
    // The external-content table's triggers (SQLite's FTS5 documentation): every change to
    // message_search, including deletes cascading from message, reaches the FTS5 index.
    await sql`create trigger message_search_ai after insert on message_search begin
      insert into message_search_fts(rowid, terms) values (new.doc, new.terms);
    end`.execute(db);
    await sql`create trigger message_search_ad after delete on message_search begin
      insert into message_search_fts(message_search_fts, rowid, terms)
        values ('delete', old.doc, old.terms);
    end`.execute(db);
    await sql`create trigger message_search_au after update on message_search begin
      insert into message_search_fts(message_search_fts, rowid, terms)
        values ('delete', old.doc, old.terms);
      insert into message_search_fts(rowid, terms) values (new.doc, new.terms);
    end`.execute(db);
    return;
  }
  // PostgreSQL only: a GIN index over the terms as an array; a search asks for rows whose array
  // contains every query term (`@>`), exact element equality like FTS5's token match.
  await sql`create table message_search (
    "messageId" text primary key references message(id) on delete cascade,
    terms text not null
  )`.execute(db);
  await sql`create index message_search_terms_idx on message_search
    using gin (string_to_array(terms, ' '))`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
