import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import type { Db } from '../db/database.js';
import { knownMigrations, migrateToLatest } from '../db/migrate.js';
import { BlobStore } from '../services/files/index.js';

import { SQLITE_FILE, type DataSource } from './backup.js';
import { blobStoreEmpty, readBlobList, restoreBlobs } from './blob-copy.js';
import { Hashing } from './file-hash.js';
import { BackupError, readManifest, type BackupManifest, type TablePart } from './manifest.js';
import { copyTablesIntoPostgres, loadIntoEmptyPostgres, type TableLoad } from './pg-load.js';
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
    await pipeline(createReadStream(path.join(dir, part.file)), hashing, createWriteStream(tmp, { mode: 0o600 }));
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
 * in one transaction, parents first, each file checked against its checksum and row count.
 * Returns how to drop what it created.
 */
async function restorePostgres(
  url: string,
  dir: string,
  parts: TablePart[],
  lastMigration: string,
  openDb: () => Db,
  progress: Progress,
): Promise<() => Promise<void>> {
  const loads: TableLoad[] = parts.map((part) => ({
    table: part.table,
    columns: part.columns,
    open: () => createReadStream(path.join(dir, part.file)),
    check: async (hashing, rowCount) => {
      if (hashing.digest() !== part.sha256) {
        throw new BackupError(`${part.file} in the backup is damaged (its checksum does not match)`);
      }
      if (rowCount !== part.rows) {
        throw new BackupError(
          `${part.file} holds ${rowCount} rows where the manifest says ${part.rows}`,
        );
      }
    },
  }));
  return loadIntoEmptyPostgres(url, lastMigration, openDb, 'restore', (client) =>
    copyTablesIntoPostgres(client, loads, progress),
  );
}
