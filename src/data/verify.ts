import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';

import Sqlite from 'better-sqlite3';

import { BlobStore } from '../services/files/index.js';

import { readBlobList, verifyBlobs } from './blob-copy.js';
import { ident } from './catalog.js';
import { hashFile } from './file-hash.js';
import { readManifest, type BackupManifest, type TablePart } from './manifest.js';
import { count, type Progress } from './progress.js';

export interface Verification {
  manifest: BackupManifest;
  /** Empty when the backup is whole. */
  problems: string[];
}

/**
 * Checks a backup without restoring it: every part against its checksum, the row counts, the
 * SQLite file's own consistency check, every stored file against its name, the server keys.
 */
export async function verifyBackup(dir: string, progress: Progress): Promise<Verification> {
  const manifest = await readManifest(dir);
  const problems: string[] = [];
  const db = manifest.database;
  if (db.kind === 'sqlite-file') {
    progress.update({ step: 'database', totalBytes: db.bytes + manifest.blobs.bytes });
    const file = path.join(dir, db.file);
    const sum = await hashFile(file).catch(() => null);
    if (!sum) problems.push(`${db.file} is missing`);
    else if (sum.sha256 !== db.sha256) problems.push(`${db.file} is damaged (checksum)`);
    else {
      progress.add({ bytes: sum.bytes });
      problems.push(...checkSqliteFile(file, manifest.counts));
    }
  } else {
    const total = db.tables.reduce((s, t) => s + t.bytes, 0) + manifest.blobs.bytes;
    progress.update({ totalBytes: total });
    for (const part of db.tables) {
      progress.update({ step: `table ${part.table}` });
      problems.push(...(await checkCopyFile(dir, part, progress)));
    }
  }
  if (!manifest.keys.kinds.includes('signing')) {
    problems.push('the backup holds no server signing key');
  }
  try {
    const entries = await readBlobList(dir, manifest.blobs.list);
    problems.push(...(await verifyBlobs(new BlobStore(path.join(dir, 'blobs')), entries, progress)));
  } catch (err) {
    problems.push((err as Error).message);
  }
  const rows = Object.values(manifest.counts).reduce((a, b) => a + b, 0);
  progress.done(
    problems.length === 0
      ? `whole: ${count(rows)} rows, ${count(manifest.blobs.count)} files`
      : `${problems.length} problem(s)`,
  );
  return { manifest, problems };
}

function checkSqliteFile(file: string, counts: Record<string, number>): string[] {
  const problems: string[] = [];
  const db = new Sqlite(file, { readonly: true });
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') problems.push(`the database file fails SQLite's check: ${String(check)}`);
    for (const [table, n] of Object.entries(counts)) {
      const row = db.prepare(`select count(*) as n from ${ident(table)}`).get() as { n: number };
      if (row.n !== n) problems.push(`table ${table} holds ${row.n} rows, the manifest says ${n}`);
    }
  } catch (err) {
    problems.push(`the database file cannot be read: ${(err as Error).message}`);
  } finally {
    db.close();
  }
  return problems;
}

/** A COPY text file: its checksum, and one line per row (COPY escapes newlines in values). */
async function checkCopyFile(dir: string, part: TablePart, progress: Progress): Promise<string[]> {
  const hash = createHash('sha256');
  let lines = 0;
  let size = 0;
  try {
    for await (const chunk of createReadStream(path.join(dir, part.file))) {
      const buf = chunk as Buffer;
      hash.update(buf);
      size += buf.length;
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
      progress.add({ bytes: buf.length });
    }
  } catch {
    return [`${part.file} is missing`];
  }
  if (hash.digest('hex') !== part.sha256 || size !== part.bytes) {
    return [`${part.file} is damaged (checksum)`];
  }
  if (lines !== part.rows) return [`${part.file} holds ${lines} rows, the manifest says ${part.rows}`];
  progress.add({ rows: lines });
  return [];
}
