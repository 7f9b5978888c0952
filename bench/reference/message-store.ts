// The bare storage the send references use: the same message table and indexes as the server's
// migration, on the same database with the same settings (SQLite WAL + synchronous=FULL, or
// PostgreSQL), with one insert per committed message and nothing else.
import { randomUUID } from 'node:crypto';

import Sqlite from 'better-sqlite3';
import pg from 'pg';
import postgresJs from 'postgres';

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
  const max = Number(process.env.BENCH_POOL ?? 32);
  // BENCH_READS: primary-key reads before each insert (a send reads its session and access).
  const reads = Number(process.env.BENCH_READS ?? 0);
  const insertSql =
    'insert into bench_message (id, "conversationId", "authorId", text, "createdAt") values ($1, $2, $3, $4, $5)';
  const readSql = 'select id, text from bench_message where id = $1';
  if (process.env.BENCH_PG_DRIVER === 'postgres.js') {
    // Postgres.js pipelines the queries of concurrent callers on its connections and prepares
    // each statement once per connection.
    const db = postgresJs(url, { max, prepare: true, onnotice: () => {} });
    for (const s of DDL) await db.unsafe(s);
    return {
      insert: async (c, t) => {
        for (let i = 0; i < reads; i++) await db.unsafe(readSql, [c], { prepare: true });
        await db.unsafe(insertSql, [randomUUID(), c, 'author', t, Date.now()], { prepare: true });
      },
      close: () => db.end(),
    };
  }
  const pool = new pg.Pool({ connectionString: url, max });
  for (const s of DDL) await pool.query(s);
  const named = process.env.BENCH_PG_NAMED === '1';
  return {
    insert: async (c, t) => {
      for (let i = 0; i < reads; i++) {
        await pool.query(
          named ? { name: 'r', text: readSql, values: [c] } : readSql,
          named ? undefined : [c],
        );
      }
      const values = [randomUUID(), c, 'author', t, Date.now()];
      await pool.query(
        named ? { name: 'i', text: insertSql, values } : insertSql,
        named ? undefined : values,
      );
    },
    close: () => pool.end(),
  };
}
