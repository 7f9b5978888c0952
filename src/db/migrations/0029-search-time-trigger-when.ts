import { sql, SqliteAdapter, type Kysely } from 'kysely';

// PostgreSQL: the trigger that gives an index row its message's send time (migration 0028) runs
// only for a row written without it. A send writes the time with the row, and the trigger's
// function was still called for each send only to find it there: 16 µs of PostgreSQL's time in
// a send's statement of about 290 (the median of its plans under `send --pg`, auto_explain;
// docs/performance.md, "One send on PostgreSQL"). A `when` condition is checked without calling
// the function. Edits, rebuilds, imports and `svc move` leave the time out and get it as before.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return;
  await sql`drop trigger message_search_at on message_search`.execute(db);
  await sql`create trigger message_search_at before insert on message_search
    for each row when (new."at" is null) execute function message_search_at()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are append-only; restore from a backup to go back');
}
