import { sql, SqliteAdapter, type Kysely } from 'kysely';

// SQLite: the FTS5 rowid of an index row (`message_search.doc`) becomes its message's place in
// time, the send time (ms) times 2^20 plus its place among that millisecond's rows (ids in
// order here; later rows take the next free place: services/search/match-queries.ts, `timeDoc`).
// FTS5 then reads a query's matches newest first by itself and a search reads only the matches
// its page takes, where it walked every message between them (docs/search.md, "Scale"). Until
// now `doc` counted rows as they were written, which an import, a rebuild or an older message's
// first index row puts out of time order. PostgreSQL is unchanged.
//
// Every row gets its new `doc` here, and the FTS5 index is rebuilt from the rows: a rebuild
// (`svc search reindex`) would leave rows in the old order until it reached them. The triggers
// that keep FTS5 in step (migration 0011) are dropped meanwhile and made again as they were.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  for (const t of ['message_search_ai', 'message_search_ad', 'message_search_au']) {
    await sql`drop trigger ${sql.id(t)}`.execute(db);
  }
  await sql`create temp table search_doc (old integer primary key, new integer not null)`.execute(
    db,
  );
  await sql`insert into search_doc (old, new)
    select s.doc, m."createdAt" * 1048576
      + row_number() over (partition by m."createdAt" order by m.id) - 1
    from message_search as s join message as m on m.id = s."messageId"`.execute(db);
  // Out of the way first (below zero), so no row takes a `doc` another still holds.
  await sql`update message_search set doc = -doc - 1`.execute(db);
  await sql`update message_search
    set doc = (select new from search_doc where old = -message_search.doc - 1)`.execute(db);
  await sql`drop table search_doc`.execute(db);
  await sql`insert into message_search_fts(message_search_fts) values ('rebuild')`.execute(db);
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
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
