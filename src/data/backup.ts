import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import Sqlite from 'better-sqlite3';
import { to as copyTo } from 'pg-copy-streams';

import { loadPg } from '../db/postgres/module.js';
import { BlobStore } from '../services/files/index.js';
import { readVersion } from '../version.js';

import { copyAllBlobs, writeBlobList } from './blob-copy.js';
import { ident, pgTables, sqliteTables } from './catalog.js';
import { hashFile, Hashing } from './file-hash.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  BackupError,
  writeManifest,
  type BackupManifest,
  type TablePart,
} from './manifest.js';
import { bytes, count, type Progress } from './progress.js';
import { snapshotSqlite, sqliteUsedBytes } from './sqlite-snapshot.js';

/** Where the instance's data is: the database (a SQLite file or a PostgreSQL URL) and files. */
export interface DataSource {
  /** PostgreSQL connection URL, or null for SQLite under `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
}

export const SQLITE_FILE = 'svc.sqlite';
const SQLITE_PART = 'database.sqlite';

/**
 * Writes a backup of the running instance into `dir` (absent or empty): one consistent snapshot
 * of the database, then the stored files, then the manifest (docs/operations.md, "Backups").
 */
export async function backup(
  source: DataSource,
  dir: string,
  progress: Progress,
): Promise<BackupManifest> {
  await prepareEmptyFolder(dir);
  try {
    const db =
      source.databaseUrl === null
        ? await backupSqlite(path.join(source.dataDir, SQLITE_FILE), dir, progress)
        : await backupPostgres(source.databaseUrl, dir, progress);
    const blobsDir = path.join(dir, 'blobs');
    const { entries, damaged } = await copyAllBlobs(
      new BlobStore(path.join(source.dataDir, 'blobs')),
      new BlobStore(blobsDir),
      progress,
    );
    await fs.rm(path.join(blobsDir, 'tmp'), { recursive: true, force: true });
    if (damaged.length > 0) {
      throw new BackupError(
        `${damaged.length} stored file(s) do not match their names (damaged on the disk), e.g. ${damaged[0]}; restore them from an older backup or remove what refers to them`,
      );
    }
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      formatVersion: BACKUP_FORMAT_VERSION,
      svcVersion: readVersion(),
      createdAt: new Date().toISOString(),
      ...db,
      blobs: {
        list: await writeBlobList(dir, entries),
        count: entries.length,
        bytes: entries.reduce((sum, e) => sum + e.bytes, 0),
      },
    };
    await writeManifest(dir, manifest);
    await keepPrivate(dir);
    const rows = Object.values(manifest.counts).reduce((a, b) => a + b, 0);
    progress.done(
      `${Object.keys(manifest.counts).length} tables, ${count(rows)} rows, ${count(entries.length)} files (${bytes(manifest.blobs.bytes)}) -> ${dir}`,
    );
    return manifest;
  } catch (err) {
    // Nothing half-written is left looking like a backup.
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

type DatabasePart = Pick<BackupManifest, 'dialect' | 'migrations' | 'counts' | 'database' | 'keys'>;

async function backupSqlite(file: string, dir: string, progress: Progress): Promise<DatabasePart> {
  const into = path.join(dir, SQLITE_PART);
  let expected = 0;
  try {
    const live = new Sqlite(file, { readonly: true, fileMustExist: true });
    expected = sqliteUsedBytes(live);
    live.close();
  } catch {
    throw new BackupError(
      `there is no database at ${file}; check SVC_DATA_DIR (or SVC_DATABASE_URL)`,
    );
  }
  progress.update({ step: 'database', totalBytes: expected });
  await snapshotSqlite(file, into, (written) => progress.update({ bytes: written }));
  const copy = new Sqlite(into, { readonly: true });
  try {
    const counts: Record<string, number> = {};
    for (const t of sqliteTables(copy)) {
      counts[t.name] = (
        copy.prepare(`select count(*) as n from ${ident(t.name)}`).get() as { n: number }
      ).n;
    }
    progress.update({ rows: Object.values(counts).reduce((a, b) => a + b, 0) });
    const migrations = (
      copy.prepare('select name from kysely_migration order by name').all() as { name: string }[]
    ).map((r) => r.name);
    const keys = copy.prepare('select kind, "publicKey" from server_key').all() as KeyRow[];
    const checksum = await hashFile(into);
    return {
      dialect: 'sqlite',
      migrations,
      counts,
      database: { kind: 'sqlite-file', file: SQLITE_PART, ...checksum },
      keys: keysOf(keys),
    };
  } finally {
    copy.close();
  }
}

async function backupPostgres(url: string, dir: string, progress: Progress): Promise<DatabasePart> {
  const client = new (loadPg().Client)({ connectionString: url });
  await client.connect();
  try {
    // One snapshot for every table: what a commit changed is in every file or in none.
    await client.query('begin isolation level repeatable read read only');
    const tables = await pgTables(client);
    const migrations = (
      await client.query<{ name: string }>('select name from kysely_migration order by name')
    ).rows.map((r) => r.name);
    const keys = (await client.query<KeyRow>('select kind, "publicKey" from server_key')).rows;
    await fs.mkdir(path.join(dir, 'database'));
    const parts: TablePart[] = [];
    for (const t of tables) {
      progress.update({ step: `table ${t.name}` });
      const file = path.join('database', `${t.name}.copy`);
      const columns = t.columns.map(ident).join(', ');
      const stream = client.query(copyTo(`copy ${ident(t.name)} (${columns}) to stdout`));
      const hashing = new Hashing((n) => progress.add({ bytes: n }));
      await pipeline(stream, hashing, createWriteStream(path.join(dir, file)));
      progress.add({ rows: stream.rowCount });
      parts.push({
        table: t.name,
        columns: t.columns,
        rows: stream.rowCount,
        file,
        bytes: hashing.bytes,
        sha256: hashing.digest(),
      });
    }
    await client.query('commit');
    return {
      dialect: 'postgres',
      migrations,
      counts: Object.fromEntries(parts.map((p) => [p.table, p.rows])),
      database: { kind: 'postgres-copy', tables: parts },
      keys: keysOf(keys),
    };
  } finally {
    await client.end();
  }
}

interface KeyRow {
  kind: string;
  publicKey: string;
}

function keysOf(rows: KeyRow[]): BackupManifest['keys'] {
  if (!rows.some((r) => r.kind === 'signing')) {
    throw new BackupError(
      'the database has no server signing key: start the server once (it creates the keys), or restore the keys first',
    );
  }
  return {
    kinds: rows.map((r) => r.kind).sort(),
    signingPublicKey: rows.find((r) => r.kind === 'signing')?.publicKey ?? null,
  };
}

/** Makes `dir` if absent; refuses a folder that holds anything (a backup never overwrites). */
/**
 * An absent or empty folder, made 0700 before anything is written into it: a backup holds the
 * server's keys and every message (docs/security.md, "Secrets at rest").
 */
async function prepareEmptyFolder(dir: string): Promise<void> {
  try {
    const entries = await fs.readdir(dir);
    if (entries.length > 0) {
      throw new BackupError(
        `${dir} is not empty; give a new folder (a backup never overwrites one)`,
      );
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fs.mkdir(dir, { recursive: true });
  }
  await fs.chmod(dir, 0o700);
}

/** Every file under `dir` 0600 and every folder 0700, whatever wrote them and the umask. */
async function keepPrivate(dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      await fs.chmod(full, 0o700);
      await keepPrivate(full);
    } else {
      await fs.chmod(full, 0o600);
    }
  }
}
