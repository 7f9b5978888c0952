// The bare storage the send references use: the same message table and indexes as the server's
// migration, on the same database with the same settings (SQLite WAL + synchronous=FULL, or
// PostgreSQL), with one insert per committed message and nothing else.
import { randomUUID } from 'node:crypto';

import Sqlite from 'better-sqlite3';
import pg from 'pg';

export interface Store {
  insert(conversationId: string, text: string): Promise<void>;
  close(): Promise<void>;
}

const DDL = [
  `create table if not exists bench_message (id text primary key, "conversationId" text not null, "authorId" text not null, text text, "createdAt" bigint not null)`,
  `create index if not exists bench_message_conv on bench_message ("conversationId", "createdAt", id)`,
];

export async function openStore(): Promise<Store> {
  const url = process.env.BENCH_PG_URL;
  if (!url) {
    const db = new Sqlite(process.env.BENCH_SQLITE_FILE ?? '/tmp/bench-ref.sqlite');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    for (const s of DDL) db.exec(s);
    const stmt = db.prepare(
      'insert into bench_message (id, "conversationId", "authorId", text, "createdAt") values (?, ?, ?, ?, ?)',
    );
    return {
      insert: async (c, t) => {
        stmt.run(randomUUID(), c, 'author', t, Date.now());
      },
      close: async () => {
        db.close();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.BENCH_POOL ?? 32) });
  for (const s of DDL) await pool.query(s);
  return {
    insert: async (c, t) => {
      await pool.query(
        'insert into bench_message (id, "conversationId", "authorId", text, "createdAt") values ($1, $2, $3, $4, $5)',
        [randomUUID(), c, 'author', t, Date.now()],
      );
    },
    close: () => pool.end(),
  };
}
