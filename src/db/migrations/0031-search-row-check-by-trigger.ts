import { sql, SqliteAdapter, type Kysely } from 'kysely';

// PostgreSQL: an index row's message is checked by the index's own triggers instead of a foreign
// key. A send inserts its message and the message's index row in one statement
// (db/statements/deferred-writes.ts), so the row cannot name a missing message; yet the foreign
// key checked it after every send, locking the message row just written (a `for key share`, a
// WAL record of its own): 26–33 µs of PostgreSQL's time in a send's statement of about 290
// (docs/performance.md, "One send on PostgreSQL"). Every other writer (an edit, a rebuild, an
// import, `svc move`'s COPY, a send of the release before, which leaves out the send time) writes
// the row without `at`, and the trigger that reads the time from the message (migrations 0028,
// 0029) now takes the same lock the foreign key took and refuses a row whose message is not
// there, with the foreign key's error code. A send of the release before, whose message comes
// in the same statement, is checked after the statement, by the trigger that sets its time then.
// A deleted message's index row goes with it, as `on delete cascade` did: a row trigger on
// `message`, which fires for deletes cascading from a conversation or workspace too.
// SQLite keeps its foreign key: its check is a lookup in the same file, without a lock to write.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`do $$
    declare fk text;
    begin
      select conname into fk from pg_catalog.pg_constraint
        where conrelid = 'message_search'::regclass and contype = 'f';
      if fk is not null then
        execute format('alter table message_search drop constraint %I', fk);
      end if;
    end $$`.execute(db);
  await sql`create or replace function message_search_at() returns trigger language plpgsql as $$
    begin
      if new."at" is null then
        new."at" := (select m."createdAt" from message as m
          where m.id = new."messageId" for key share);
      end if;
      return new;
    end $$`.execute(db);
  await sql`create or replace function message_search_at_later() returns trigger
    language plpgsql as $$
    begin
      update message_search as s set "at" = m."createdAt" from message as m
        where s."messageId" = new."messageId" and m.id = s."messageId" and s."at" is null;
      perform 1 from message as m where m.id = new."messageId" for key share;
      if not found then
        raise exception 'message_search: no message %', new."messageId"
          using errcode = 'foreign_key_violation';
      end if;
      return null;
    end $$`.execute(db);
  await sql`create function message_search_gone() returns trigger language plpgsql as $$
    begin
      delete from message_search where "messageId" = old.id;
      return null;
    end $$`.execute(db);
  await sql`create trigger message_search_gone after delete on message
    for each row execute function message_search_gone()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
