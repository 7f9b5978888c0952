import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

import type { Db } from '../db/database.js';
import { knownMigrations, migrateTo, migrateToLatest } from '../db/migrate.js';
import { loadPg } from '../db/pg-module.js';
import { BlobStore } from '../services/files/blob-store.js';

import { SQLITE_FILE, type DataSource } from './backup.js';
import { blobStoreEmpty, readBlobList, restoreBlobs } from './blob-copy.js';
import { ident, pgSchemaName, pgTableCount, pgTables } from './catalog.js';
import { Hashing } from './file-hash.js';
import { BackupError, readManifest, type BackupManifest, type TablePart } from './manifest.js';
import { bytes, count, type Progress } from './progress.js';

/**
 * Restores the backup at `dir` into an empty database and an empty store of files, then migrates
 * it to this build's schema. Every part is checked against its checksum as it is read; on any
 * failure what was written is removed, so the target is empty again (docs/operations.md).
 */
export async function restore(
  target: DataSource,
  dir: string,
  openDb: () => Db,
  progress: Progress,
): Promise<{ manifest: BackupManifest; migrationsApplied: string[] }> {
  const manifest = await readManifest(dir);
  const targetDialect = target.databaseUrl === null ? 'sqlite' : 'postgres';
  if (manifest.dialect !== targetDialect) {
    throw new BackupError(
      manifest.dialect === 'sqlite'
        ? 'this is a backup of a SQLite database and SVC_DATABASE_URL names PostgreSQL: restore it into an empty SVC_DATA_DIR without SVC_DATABASE_URL, then run `svc move --to <url>`'
        : 'this is a backup of a PostgreSQL database: set SVC_DATABASE_URL to an empty PostgreSQL database to restore it',
    );
  }
  const last = manifest.migrations.at(-1);
  if (last === undefined || !knownMigrations().includes(last)) {
    throw new BackupError(
      `the backup's schema (${last ?? 'none'}) is newer than this build's; restore it with svc ${manifest.svcVersion} or later`,
    );
  }
  const blobs = new BlobStore(path.join(target.dataDir, 'blobs'));
  if (!(await blobStoreEmpty(blobs))) {
    throw new BackupError(
      `${blobs.root} already holds stored files; restore needs an empty SVC_DATA_DIR`,
    );
  }
  const entries = await readBlobList(dir, manifest.blobs.list);
  progress.update({ totalBytes: totalBytesOf(manifest) });
  let cleanUp: () => Promise<void> = async () => {};
  try {
    if (manifest.database.kind === 'sqlite-file') {
      cleanUp = await restoreSqlite(target, dir, manifest.database, progress);
    } else {
      cleanUp = await restorePostgres(
        target.databaseUrl!,
        dir,
        manifest.database.tables,
        last,
        openDb,
        progress,
      );
    }
    await restoreBlobs(new BlobStore(path.join(dir, 'blobs')), blobs, entries, progress);
    const db = openDb();
    let migrationsApplied: string[];
    try {
      migrationsApplied = await migrateToLatest(db);
    } finally {
      await db.close();
    }
    const rows = Object.values(manifest.counts).reduce((a, b) => a + b, 0);
    progress.done(
      `${count(rows)} rows and ${count(entries.length)} files (${bytes(manifest.blobs.bytes)}) from ${dir}`,
    );
    return { manifest, migrationsApplied };
  } catch (err) {
    await cleanUp();
    await fs.rm(path.join(blobs.root), { recursive: true, force: true });
    throw err;
  }
}

function totalBytesOf(m: BackupManifest): number {
  const db =
    m.database.kind === 'sqlite-file'
      ? m.database.bytes
      : m.database.tables.reduce((sum, t) => sum + t.bytes, 0);
  return db + m.blobs.bytes;
}

/** Copies the database file into place; returns how to remove it again. */
async function restoreSqlite(
  target: DataSource,
  dir: string,
  part: { file: string; sha256: string },
  progress: Progress,
): Promise<() => Promise<void>> {
  const file = path.join(target.dataDir, SQLITE_FILE);
  for (const f of [file, `${file}-wal`]) {
    const st = await fs.stat(f).catch(() => null);
    if (st && st.size > 0) {
      throw new BackupError(
        `${f} already exists; restore needs an empty SVC_DATA_DIR (move the old one aside, or point SVC_DATA_DIR at a new folder)`,
      );
    }
  }
  await fs.mkdir(target.dataDir, { recursive: true });
  const tmp = `${file}.restoring`;
  const remove = async () => {
    for (const f of [tmp, file, `${file}-wal`, `${file}-shm`]) await fs.rm(f, { force: true });
  };
  progress.update({ step: 'database' });
  const hashing = new Hashing((n) => progress.add({ bytes: n }));
  try {
    await pipeline(createReadStream(path.join(dir, part.file)), hashing, createWriteStream(tmp));
  } catch (err) {
    await remove();
    throw new BackupError(`reading ${part.file} of the backup failed: ${(err as Error).message}`);
  }
  if (hashing.digest() !== part.sha256) {
    await remove();
    throw new BackupError(`${part.file} in the backup is damaged (its checksum does not match)`);
  }
  const handle = await fs.open(tmp, 'r+');
  await handle.sync();
  await handle.close();
  await fs.rename(tmp, file);
  return remove;
}

/**
 * Creates the backup's schema by migrating to its last migration, then copies every table's rows
 * in one transaction, parents first. Returns how to drop what it created.
 */
async function restorePostgres(
  url: string,
  dir: string,
  parts: TablePart[],
  lastMigration: string,
  openDb: () => Db,
  progress: Progress,
): Promise<() => Promise<void>> {
  const client = new (loadPg().Client)({ connectionString: url });
  await client.connect();
  try {
    const existing = await pgTableCount(client);
    if (existing > 0) {
      throw new BackupError(
        `the PostgreSQL schema "${await pgSchemaName(client)}" already holds ${existing} table(s); restore needs an empty database (create one with createdb, or point SVC_DATABASE_URL at an empty schema)`,
      );
    }
  } catch (err) {
    await client.end();
    throw err;
  }
  const drop = async () => {
    const c = new (loadPg().Client)({ connectionString: url });
    await c.connect();
    try {
      const names = await c.query<{ name: string }>(
        `select c.relname as name from pg_catalog.pg_class c
           join pg_catalog.pg_namespace n on n.oid = c.relnamespace
          where n.nspname = current_schema() and c.relkind in ('r', 'p')`,
      );
      for (const r of names.rows) await c.query(`drop table if exists ${ident(r.name)} cascade`);
    } finally {
      await c.end();
    }
  };
  try {
    const db = openDb();
    try {
      await migrateTo(db, lastMigration);
    } finally {
      await db.close();
    }
    await copyIntoPostgres(client, dir, parts, progress);
  } catch (err) {
    await drop();
    throw err;
  } finally {
    await client.end();
  }
  return drop;
}

async function copyIntoPostgres(
  client: pg.Client,
  dir: string,
  parts: TablePart[],
  progress: Progress,
): Promise<void> {
  const tables = await pgTables(client);
  const byTable = new Map(parts.map((p) => [p.table, p]));
  for (const p of parts) {
    if (!tables.some((t) => t.name === p.table)) {
      throw new BackupError(`the backup has a table ${p.table} that its schema does not`);
    }
  }
  await client.query('begin');
  try {
    // Rows the migrations themselves insert (the direct-messages space, the search position)
    // are in the backup too: clear them first, children first.
    for (const t of [...tables].reverse()) await client.query(`delete from ${ident(t.name)}`);
    for (const t of tables) {
      const part = byTable.get(t.name);
      if (!part) continue;
      progress.update({ step: `table ${t.name}` });
      const columns = part.columns.map(ident).join(', ');
      const hashing = new Hashing((n) => progress.add({ bytes: n }));
      const sink = client.query(copyFrom(`copy ${ident(t.name)} (${columns}) from stdin`));
      await pipeline(createReadStream(path.join(dir, part.file)), hashing, sink);
      if (hashing.digest() !== part.sha256) {
        throw new BackupError(`${part.file} in the backup is damaged (its checksum does not match)`);
      }
      if (sink.rowCount !== part.rows) {
        throw new BackupError(
          `${part.file} holds ${sink.rowCount} rows where the manifest says ${part.rows}`,
        );
      }
      progress.add({ rows: sink.rowCount });
    }
    await resetSequences(client);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
}

/** Moves every serial column's sequence past the largest value copied in. */
export async function resetSequences(client: pg.ClientBase): Promise<void> {
  const serials = await client.query<{ table: string; column: string; seq: string }>(
    `select c.relname as table, a.attname as column,
            pg_get_serial_sequence(quote_ident(c.relname), a.attname) as seq
       from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = current_schema() and c.relkind = 'r'
        and pg_get_serial_sequence(quote_ident(c.relname), a.attname) is not null`,
  );
  for (const s of serials.rows) {
    await client.query(
      `select setval($1, coalesce(max(${ident(s.column)}), 1), max(${ident(s.column)}) is not null) from ${ident(s.table)}`,
      [s.seq],
    );
  }
}
