import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

import { isSha256, type BlobStore } from '../services/files/index.js';

import { BackupError, type PartChecksum } from './manifest.js';
import type { Progress } from './progress.js';

// Stored files (attachments, avatars, emoji, plugin bundles: one content-addressed store, docs/
// files.md) are copied through BlobStore.put, which hashes what it writes: a copy is kept under
// the name of the bytes it really holds, so a file damaged on either side is found, never
// carried over silently. Several are copied at once, and all are synced together at the end
// (a sync per file, each waiting for the disk in turn, took most of a backup's time).

export interface BlobEntry {
  sha256: string;
  bytes: number;
}

export const BLOB_LIST_FILE = 'blobs.txt';

/**
 * Copies every file of `from` into `to`. A file removed while copying (the sweep of a file no
 * row names) is skipped; one whose bytes do not match its name is left out and reported.
 */
export async function copyAllBlobs(
  from: BlobStore,
  to: BlobStore,
  progress: Progress,
): Promise<{ entries: BlobEntry[]; damaged: string[] }> {
  const entries: BlobEntry[] = [];
  const damaged: string[] = [];
  progress.update({ step: 'files' });
  const names: string[] = [];
  for await (const name of from.list()) names.push(name);
  await concurrently(names, async (name) => {
    const copied = await copyOne(from, to, name);
    if (copied === 'gone') return;
    if (copied === 'damaged') {
      damaged.push(name);
      return;
    }
    entries.push(copied);
    progress.add({ files: 1, bytes: copied.bytes });
  });
  await to.syncAll(entries.map((e) => e.sha256));
  entries.sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1));
  return { entries, damaged };
}

/** Files copied at once: their reads and writes overlap, and none waits for the disk alone. */
const COPIES_AT_ONCE = 8;

/** Runs `fn` on every item, a few at once; on a failure starts no more, and throws it once all have stopped. */
async function concurrently<T>(items: readonly T[], fn: (item: T) => Promise<void>) {
  let next = 0;
  let failed = false;
  const results = await Promise.allSettled(
    Array.from({ length: COPIES_AT_ONCE }, async () => {
      while (!failed && next < items.length) {
        try {
          await fn(items[next++]!);
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    }),
  );
  const rejected = results.find((r) => r.status === 'rejected');
  if (rejected) throw (rejected as PromiseRejectedResult).reason;
}

async function copyOne(
  from: BlobStore,
  to: BlobStore,
  name: string,
): Promise<BlobEntry | 'gone' | 'damaged'> {
  let stored;
  try {
    // Synced all together once copied (syncAll), not one by one.
    stored = await to.put(createReadStream(from.pathOf(name)), {
      maxBytes: Number.MAX_SAFE_INTEGER,
      sync: false,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  if (stored.sha256 !== name) {
    // Not what the name promises: drop the copy unless those bytes are a stored file of their own.
    if ((await from.size(stored.sha256)) === null) {
      await fs.rm(to.pathOf(stored.sha256), { force: true });
    }
    return 'damaged';
  }
  return { sha256: name, bytes: stored.sizeBytes };
}

/** Writes the list of files as `<sha256> <bytes>` lines; its checksum for the manifest. */
export async function writeBlobList(dir: string, entries: BlobEntry[]): Promise<PartChecksum> {
  const text = entries.map((e) => `${e.sha256} ${e.bytes}\n`).join('');
  await fs.writeFile(path.join(dir, BLOB_LIST_FILE), text);
  return {
    file: BLOB_LIST_FILE,
    bytes: Buffer.byteLength(text),
    sha256: createHash('sha256').update(text).digest('hex'),
  };
}

/** Reads the list of files of a backup, checking it against its manifest checksum. */
export async function readBlobList(dir: string, part: PartChecksum): Promise<BlobEntry[]> {
  const text = await fs.readFile(path.join(dir, part.file), 'utf8').catch(() => {
    throw new BackupError(`the backup's list of stored files (${part.file}) is missing`);
  });
  if (createHash('sha256').update(text).digest('hex') !== part.sha256) {
    throw new BackupError(`the backup's list of stored files (${part.file}) is damaged`);
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line, i) => {
      const [sha256, size] = line.split(' ');
      if (!sha256 || !isSha256(sha256) || !/^\d+$/.test(size ?? '')) {
        throw new BackupError(`${part.file} line ${i + 1} is not "<sha256> <bytes>"`);
      }
      return { sha256, bytes: Number(size) };
    });
}

/**
 * Copies the listed files of a backup's store into `to`, each checked against its name and size
 * as it is written. Throws on the first file missing or damaged.
 */
export async function restoreBlobs(
  from: BlobStore,
  to: BlobStore,
  entries: BlobEntry[],
  progress: Progress,
): Promise<void> {
  progress.update({ step: 'files' });
  await concurrently(entries, async (entry) => {
    const copied = await copyOne(from, to, entry.sha256);
    if (copied === 'gone') throw new BackupError(`the backup lacks stored file ${entry.sha256}`);
    if (copied === 'damaged' || copied.bytes !== entry.bytes) {
      throw new BackupError(`stored file ${entry.sha256} in the backup is damaged`);
    }
    progress.add({ files: 1, bytes: copied.bytes });
  });
  await to.syncAll(entries.map((e) => e.sha256));
}

/** Checks every listed file of a backup's store without copying it; the problems found. */
export async function verifyBlobs(
  from: BlobStore,
  entries: BlobEntry[],
  progress: Progress,
): Promise<string[]> {
  const problems: string[] = [];
  progress.update({ step: 'files' });
  for (const entry of entries) {
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of createReadStream(from.pathOf(entry.sha256))) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      problems.push(`stored file ${entry.sha256} is missing`);
      continue;
    }
    if (hash.digest('hex') !== entry.sha256 || size !== entry.bytes) {
      problems.push(`stored file ${entry.sha256} is damaged`);
    }
    progress.add({ files: 1, bytes: size });
  }
  return problems;
}

/** Whether a blob store holds no file (an absent folder holds none). */
export async function blobStoreEmpty(store: BlobStore): Promise<boolean> {
  for await (const _ of store.list()) return false;
  return true;
}
