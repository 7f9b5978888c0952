import fs from 'node:fs/promises';
import path from 'node:path';

// A backup is a folder (docs/operations.md, "Backups"):
//
//   manifest.json       written last: a folder without it is not a backup
//   database.sqlite     SQLite: the database as one file (the online backup API), or
//   database/<t>.copy   PostgreSQL: each table in COPY's text format, in one snapshot
//   blobs.txt           every stored file as "<sha256> <bytes>", sorted
//   blobs/ab/cd/<sha>   the stored files, laid out as the blob store lays them
//
// Every part has its sha256 in the manifest; a stored file is named by its own sha256.

export const MANIFEST_FILE = 'manifest.json';
export const BACKUP_FORMAT = 'svc-backup';
/** Raised when the layout changes in a way an older restore could not read. */
export const BACKUP_FORMAT_VERSION = 1;

export interface PartChecksum {
  file: string;
  bytes: number;
  sha256: string;
}

export interface TablePart extends PartChecksum {
  table: string;
  columns: string[];
  rows: number;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  /** The svc release that wrote it. */
  svcVersion: string;
  createdAt: string;
  /** Where it was taken from; restore takes it into the same kind of database. */
  dialect: 'sqlite' | 'postgres';
  /** The migrations applied to the data, oldest first; restore migrates on from the last. */
  migrations: string[];
  /** Rows per table at the snapshot. */
  counts: Record<string, number>;
  database:
    | ({ kind: 'sqlite-file' } & PartChecksum)
    | { kind: 'postgres-copy'; tables: TablePart[] };
  blobs: { list: PartChecksum; count: number; bytes: number };
  /** Which server keys the data holds (the signing key's public half names the server). */
  keys: { kinds: string[]; signingPublicKey: string | null };
}

/** Reads and checks the manifest of the backup at `dir`; throws a message a person can act on. */
export async function readManifest(dir: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, MANIFEST_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new BackupError(
        `${dir} is not a complete backup: it has no ${MANIFEST_FILE} (a backup writes it last; one that stopped half-way has none)`,
      );
    }
    throw err;
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text) as BackupManifest;
  } catch {
    throw new BackupError(`${path.join(dir, MANIFEST_FILE)} is not valid JSON`);
  }
  if (manifest.format !== BACKUP_FORMAT) {
    throw new BackupError(`${path.join(dir, MANIFEST_FILE)} is not an svc backup manifest`);
  }
  if (manifest.formatVersion > BACKUP_FORMAT_VERSION) {
    throw new BackupError(
      `the backup's format ${manifest.formatVersion} is newer than this build reads (${BACKUP_FORMAT_VERSION}); restore it with svc ${manifest.svcVersion} or later`,
    );
  }
  return manifest;
}

/** Writes the manifest last, atomically (a temporary file renamed into place). */
export async function writeManifest(dir: string, manifest: BackupManifest): Promise<void> {
  const tmp = path.join(dir, `${MANIFEST_FILE}.tmp`);
  const handle = await fs.open(tmp, 'w');
  try {
    await handle.writeFile(`${JSON.stringify(manifest, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fs.rename(tmp, path.join(dir, MANIFEST_FILE));
}

/** A refusal of backup, restore or move: the message says what is wrong and what to do. */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}
