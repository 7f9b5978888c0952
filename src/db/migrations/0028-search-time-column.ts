import { sql, SqliteAdapter, type Kysely } from 'kysely';

// PostgreSQL: each index row carries its message's send time (`at`) with a btree of its own, so
// a search of a common query walks `message_search` itself newest first and checks each row's
// terms in the database, returning only the matches (docs/search.md, "How a page is found"). It
// walked `message_time_idx` and looked each message's index row up by key, two index lookups a
// message, and sent every row read to the server to be checked: a phrase read about 10,000 that
// way. SQLite is unchanged: its `doc` is already the send time (migration 0027).
//
// A send writes `at` with the row: its message is inserted by the same statement
// (db/statements/deferred-writes.ts), which a read inside that statement does not see. Every
// other writer (an edit, a rebuild, an import, `svc move`'s COPY) leaves it out and a trigger
// (PostgreSQL only, a dialect-specific step) reads it from the message, written before. A build
// of the release before this one (a rolling upgrade: docs/operations.md) sends without it: a
// second trigger, after the statement, sets it then, when the message is there to read. So
// `at` is null only inside the statement that writes the row, and cannot be declared not null.
// A message's send time never changes, so an update keeps it.
//
// Filling the column rewrites every row once (about 10 s a million rows), holding writes to
// `message_search` meanwhile; autovacuum takes back the old versions afterwards.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`alter table message_search add column "at" bigint`.execute(db);
  await sql`create function message_search_at() returns trigger language plpgsql as $$
    begin
      if new."at" is null then
        new."at" := (select m."createdAt" from message as m where m.id = new."messageId");
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger message_search_at before insert on message_search
    for each row execute function message_search_at()`.execute(db);
  await sql`create function message_search_at_later() returns trigger language plpgsql as $$
    begin
      update message_search as s set "at" = m."createdAt" from message as m
        where s."messageId" = new."messageId" and m.id = s."messageId" and s."at" is null;
      return null;
    end $$`.execute(db);
  await sql`create trigger message_search_at_later after insert on message_search
    for each row when (new."at" is null) execute function message_search_at_later()`.execute(db);
  await sql`update message_search as s set "at" = m."createdAt"
    from message as m where m.id = s."messageId"`.execute(db);
  await sql`create index message_search_time_idx on message_search ("at")`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
