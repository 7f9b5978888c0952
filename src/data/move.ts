import path from 'node:path';
import { Readable } from 'node:stream';

import Sqlite from 'better-sqlite3';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

import type { Db } from '../db/database.js';
import { knownMigrations, migrateToLatest } from '../db/migrate.js';

import { SQLITE_FILE } from './backup.js';
import { ident, pgTables, sqliteTables, type TableInfo } from './catalog.js';
import { copyValue, RowSetDigest } from './copy-text.js';
import { BackupError } from './manifest.js';
import { copyTablesIntoPostgres, loadIntoEmptyPostgres, type TableLoad } from './pg-load.js';
import { count, type Progress } from './progress.js';

// `svc move --to postgres://...` (docs/operations.md, "Moving to PostgreSQL"): the SQLite database
// of SVC_DATA_DIR copied into an empty PostgreSQL database, every row as it is (ids, times, keys,
// the names of stored files), read in one snapshot and written in one transaction by the loader
// restore uses. Each table's rows are counted and checksummed on both sides before the
// transaction commits. The SQLite file is only read; the stored files stay where they are, in
// SVC_DATA_DIR, which the server on PostgreSQL goes on using.

/** Columns one dialect has and the other lacks by design: SQLite's search row number. */
const SQLITE_ONLY_COLUMNS: Record<string, readonly string[]> = { message_search: ['doc'] };

/** Rows per chunk handed to COPY: few enough to keep memory flat, many enough to go fast. */
const ROWS_PER_CHUNK = 500;

export interface MoveResult {
  /** The source's schema, as its last migration. */
  schema: string;
  counts: Record<string, number>;
  /** Migrations applied on PostgreSQL after the copy (a source from an older build). */
  migrationsApplied: string[];
}

/**
 * Copies the SQLite database under `dataDir` into the empty PostgreSQL database at `url`.
 * `openTarget` opens that database as the server would. Refuses a target that is not empty and a
 * source that changed while it was read (a server still running on it).
 */
export async function moveToPostgres(
  dataDir: string,
  url: string,
  openTarget: () => Db,
  progress: Progress,
): Promise<MoveResult> {
  const file = path.join(dataDir, SQLITE_FILE);
  let source: Sqlite.Database;
  try {
    source = new Sqlite(file, { readonly: true, fileMustExist: true });
  } catch {
    throw new BackupError(
      `there is no SQLite database at ${file}; svc move copies the database of SVC_DATA_DIR, so check that setting`,
    );
  }
  try {
    source.pragma('busy_timeout = 10000');
    const last = lastMigration(source, file);
    const versionBefore = source.pragma('data_version', { simple: true });
    // One read transaction: every table as of the same commit.
    source.exec('begin');
    const tables = sqliteTables(source);
    const counts: Record<string, number> = {};
    for (const t of tables) {
      counts[t.name] = (
        source.prepare(`select count(*) as n from ${ident(t.name)}`).get() as { n: number }
      ).n;
    }
    progress.update({ step: 'schema' });
    const drop = await loadIntoEmptyPostgres(url, last, openTarget, 'move', async (client) => {
      const loads = await tableLoads(source, tables, counts, client);
      await copyTablesIntoPostgres(client, loads, progress);
    });
    source.exec('commit');
    if (source.pragma('data_version', { simple: true }) !== versionBefore) {
      await drop();
      throw new BackupError(
        `${file} changed while it was being copied, so the copy would miss those writes; stop the server (every svc process on this SVC_DATA_DIR) and run svc move again. The PostgreSQL database was emptied again`,
      );
    }
    let migrationsApplied: string[];
    const db = openTarget();
    try {
      migrationsApplied = await migrateToLatest(db);
    } catch (err) {
      await drop();
      throw err;
    } finally {
      await db.close();
    }
    const rows = Object.values(counts).reduce((a, b) => a + b, 0);
    progress.done(
      `${tables.length} tables, ${count(rows)} rows copied and checked -> PostgreSQL (stored files stay in ${path.join(dataDir, 'blobs')})`,
    );
    return { schema: last, counts, migrationsApplied };
  } finally {
    source.close();
  }
}

function lastMigration(db: Sqlite.Database, file: string): string {
  let names: string[];
  try {
    names = (
      db.prepare('select name from kysely_migration order by name').all() as { name: string }[]
    ).map((r) => r.name);
  } catch {
    throw new BackupError(`${file} is not an svc database (it has no migrations table)`);
  }
  const last = names.at(-1);
  if (last === undefined) throw new BackupError(`${file} has no migrations applied; nothing to move`);
  if (!knownMigrations().includes(last)) {
    throw new BackupError(
      `${file} has a newer schema (${last}) than this build knows; run svc move with the svc release that wrote it, or later`,
    );
  }
  return last;
}

/** How each SQLite table goes into PostgreSQL, and how the copy is checked. */
async function tableLoads(
  source: Sqlite.Database,
  tables: TableInfo[],
  counts: Record<string, number>,
  client: pg.ClientBase,
): Promise<TableLoad[]> {
  const target = new Map((await pgTables(client)).map((t) => [t.name, new Set(t.columns)]));
  return tables.map((t) => {
    const targetColumns = target.get(t.name);
    if (!targetColumns) {
      throw new BackupError(`the SQLite table ${t.name} has no counterpart in PostgreSQL's schema`);
    }
    const skipped = SQLITE_ONLY_COLUMNS[t.name] ?? [];
    const columns = t.columns.filter((c) => !skipped.includes(c));
    const missing = columns.filter((c) => !targetColumns.has(c));
    if (missing.length > 0) {
      throw new BackupError(
        `the SQLite table ${t.name} has column(s) ${missing.join(', ')} that PostgreSQL's schema lacks`,
      );
    }
    const digest = new RowSetDigest();
    return {
      table: t.name,
      columns,
      open: () => Readable.from(rowsAsCopyText(source, t.name, columns, digest)),
      check: async (_hashing, rowCount, pgClient) => {
        const expected = counts[t.name]!;
        if (digest.rows !== expected || rowCount !== expected) {
          throw new BackupError(
            `table ${t.name}: ${expected} rows in SQLite, ${digest.rows} read, ${rowCount} written`,
          );
        }
        const back = await readBack(pgClient, t.name, columns);
        if (back.rows !== expected || back.hex() !== digest.hex()) {
          throw new BackupError(
            `table ${t.name}: what PostgreSQL holds (${back.rows} rows) differs from SQLite's ${expected} rows (checksums differ)`,
          );
        }
      },
    };
  });
}

/** The rows of `table` as COPY text, a chunk of lines at a time, each line added to `digest`. */
function* rowsAsCopyText(
  db: Sqlite.Database,
  table: string,
  columns: string[],
  digest: RowSetDigest,
): Generator<string> {
  const stmt = db.prepare(`select ${columns.map(ident).join(', ')} from ${ident(table)}`);
  stmt.raw(true);
  stmt.safeIntegers(true);
  let chunk = '';
  let n = 0;
  for (const row of stmt.iterate() as IterableIterator<unknown[]>) {
    let line = '';
    for (let i = 0; i < row.length; i++) {
      if (i > 0) line += '\t';
      line += copyValue(row[i], () => `table ${table}, column ${columns[i]}`);
    }
    digest.add(line);
    chunk += `${line}\n`;
    if (++n === ROWS_PER_CHUNK) {
      yield chunk;
      chunk = '';
      n = 0;
    }
  }
  if (chunk) yield chunk;
}

/** The order-free checksum of `table`'s rows as PostgreSQL holds them now. */
async function readBack(
  client: pg.ClientBase,
  table: string,
  columns: string[],
): Promise<RowSetDigest> {
  const digest = new RowSetDigest();
  const cols = columns.map(ident).join(', ');
  const stream = client.query(copyTo(`copy (select ${cols} from ${ident(table)}) to stdout`));
  await digest.addLines(stream as AsyncIterable<Buffer>);
  return digest;
}
