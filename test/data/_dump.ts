import fs from 'node:fs';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import pg from 'pg';

import { isCopiedTable } from '../../src/data/catalog.js';
import { BlobStore } from '../../src/services/files/blob-store.js';
import { PG_URL, type TestDatabase } from '../_util/app.js';

// Every table and stored file of a test database, read straight from the database: what the
// data tests compare a source with its copy by.

export type Dump = Record<string, string[]>;

/** Every copied table's rows, each as JSON with its columns in name order, sorted. */
export async function dumpTables(database: TestDatabase): Promise<Dump> {
  const out: Dump = {};
  const canonical = (row: Record<string, unknown>) =>
    JSON.stringify(
      Object.keys(row)
        // The search index's order, each dialect its own, not data: SQLite's row number, and
        // PostgreSQL's copy of the message's send time (migration 0028).
        .filter((k) => k !== 'doc' && !(k === 'at' && 'messageId' in row && 'terms' in row))
        .sort()
        .map((k) => [k, row[k] === null || row[k] === undefined ? null : String(row[k])]),
    );
  if (!database.pgSchema) {
    const file = path.join(database.dataDir, 'svc.sqlite');
    if (!fs.existsSync(file)) return out;
    const db = new Sqlite(file, { readonly: true });
    try {
      const names = (
        db
          .prepare(
            "select name from sqlite_master where type = 'table' and sql not like 'CREATE VIRTUAL%'",
          )
          .all() as { name: string }[]
      ).map((r) => r.name);
      for (const name of names.filter(isCopiedTable)) {
        const rows = db.prepare(`select * from "${name}"`).all() as Record<string, unknown>[];
        out[name] = rows.map(canonical).sort();
      }
    } finally {
      db.close();
    }
    return out;
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const names = await client.query<{ name: string }>(
      `select table_name as name from information_schema.tables
        where table_schema = $1 and table_type = 'BASE TABLE'`,
      [database.pgSchema],
    );
    for (const { name } of names.rows.filter((r) => isCopiedTable(r.name))) {
      const rows = await client.query(`select * from "${database.pgSchema}"."${name}"`);
      out[name] = rows.rows.map(canonical).sort();
    }
  } finally {
    await client.end();
  }
  return out;
}

/** Every stored file's name. */
export async function dumpBlobs(dataDir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const name of new BlobStore(path.join(dataDir, 'blobs')).list()) names.push(name);
  return names.sort();
}

/** Every index of the database by name with its definition (the schema's name left out). */
export async function dumpIndexes(database: TestDatabase): Promise<string[]> {
  if (!database.pgSchema) {
    const db = new Sqlite(path.join(database.dataDir, 'svc.sqlite'), { readonly: true });
    try {
      return (
        db
          .prepare("select name, sql from sqlite_master where type = 'index' and sql is not null")
          .all() as { name: string; sql: string }[]
      )
        .map((r) => `${r.name}: ${r.sql}`)
        .sort();
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; def: string }>(
      'select indexname as name, indexdef as def from pg_indexes where schemaname = $1',
      [database.pgSchema],
    );
    return rows.map((r) => `${r.name}: ${r.def.split(`${database.pgSchema}.`).join('')}`).sort();
  } finally {
    await client.end();
  }
}
