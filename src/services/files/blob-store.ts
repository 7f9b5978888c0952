import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** What a stored blob is known by: its sha256 (lowercase hex) and its size. */
export interface StoredBlob {
  sha256: string;
  sizeBytes: number;
}

/**
 * Thrown by `BlobStore.put` as soon as the stream passes `maxBytes`: the rest of the stream is
 * not read and the temporary file is removed. File routes answer it with 413.
 */
export class BlobTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the file is larger than ${limitBytes} bytes`);
    this.name = 'BlobTooLargeError';
  }
}

/** How much of an upload is gathered before one write to the temporary file. */
const WRITE_BATCH_BYTES = 1024 * 1024;

const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface StageOptions {
  maxBytes: number;
  /**
   * Sync the file and its folder before answering (the default). False for a copy of many files
   * synced together afterwards (`syncAll`).
   */
  sync?: boolean;
}

/** True for a well-formed blob name (64 lowercase hex digits); anything else is never a path. */
export function isSha256(value: string): boolean {
  return SHA256_HEX.test(value);
}

/**
 * One content-addressed store of files under `<root>`: a blob lives at `<root>/ab/cd/<sha256>`
 * (two levels of 256 folders, so no folder grows past a few thousand entries). A blob is streamed
 * into `<root>/tmp/` while its hash and size are computed, fsynced, then renamed into place, so a
 * reader never sees a partial file and a crash leaves at most a temporary file, which the sweep
 * removes. Nothing is held whole in memory.
 *
 * Blobs are shared: the same bytes uploaded twice are stored once. Rows that use a blob (an
 * attachment, an avatar, an emoji) name it by sha256; the store itself does not count references.
 * `sweep` asks the caller which names are still referenced and removes the rest once they are older
 * than a grace period, so a blob written just before its row commits is never swept, and a crash
 * between "last row deleted" and "blob removed" leaks the blob only until the next sweep.
 *
 * Several server processes share one store when they mount the same volume at the same path:
 * writes are atomic renames of content-addressed names (two writers of the same bytes produce the
 * same file), and removal only happens in the sweep.
 */
export class BlobStore {
  private readonly tmpDir: string;

  constructor(readonly root: string) {
    this.tmpDir = path.join(root, 'tmp');
  }

  /** The file of a blob. Throws on a name that is not a sha256, so no input becomes a path. */
  pathOf(sha256: string): string {
    if (!isSha256(sha256)) throw new Error(`not a blob name: ${JSON.stringify(sha256)}`);
    return path.join(this.root, sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  /**
   * Stores what `source` yields. Refuses with `BlobTooLargeError` as soon as more than `maxBytes`
   * arrive; any error of the source (a client that stops sending) removes the temporary file and
   * is rethrown.
   */
  async put(source: AsyncIterable<Uint8Array>, opts: StageOptions): Promise<StoredBlob> {
    const staged = await this.stage(source, opts);
    try {
      return await staged.commit();
    } finally {
      await staged.discard();
    }
  }

  /**
   * Streams `source` into a temporary file and keeps it there, hashed and synced but not yet a
   * blob: a file route that has the file before the fields that authorize it holds the bytes on
   * disk (never in memory) until it can check them, then commits or discards. Same refusals as
   * `put`; the temporary file is removed on any of them. A staged file never committed nor
   * discarded (a crash) is removed by the sweep.
   */
  async stage(source: AsyncIterable<Uint8Array>, opts: StageOptions): Promise<StagedBlob> {
    await fs.mkdir(this.tmpDir, { recursive: true });
    const tmp = path.join(this.tmpDir, `${Date.now()}-${randomBytes(8).toString('hex')}`);
    const file = await fs.open(tmp, 'wx', 0o600);
    const hash = createHash('sha256');
    let size = 0;
    let closed = false;
    try {
      // Chunks are gathered into writes of about 1 MiB, and the next chunks are read while the
      // previous write is on the disk: at most two such batches are held per upload.
      let pending: Uint8Array[] = [];
      let pendingBytes = 0;
      let writing: Promise<Error | null> = Promise.resolve(null);
      const flush = async (): Promise<void> => {
        const failed = await writing;
        if (failed) throw failed;
        const batch = pending;
        pending = [];
        pendingBytes = 0;
        writing = file.writev(batch).then(
          () => null,
          (err: Error) => err,
        );
      };
      for await (const chunk of source) {
        size += chunk.byteLength;
        if (size > opts.maxBytes) throw new BlobTooLargeError(opts.maxBytes);
        hash.update(chunk);
        pending.push(chunk);
        pendingBytes += chunk.byteLength;
        if (pendingBytes >= WRITE_BATCH_BYTES) await flush();
      }
      await flush();
      const failed = await writing;
      if (failed) throw failed;
      if (opts.sync !== false) await file.sync();
      await file.close();
      closed = true;
      return new StagedBlob(this, tmp, hash.digest('hex'), size, opts.sync !== false);
    } catch (err) {
      if (!closed) await file.close().catch(() => undefined);
      await fs.unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Syncs the named blobs and their folders to the disk, many at once: for a copy of many files
   * made with `sync: false` (a backup, a restore), where a sync per file would each wait for the
   * disk in turn.
   */
  async syncAll(names: readonly string[], concurrency = 32): Promise<void> {
    const dirs = new Set<string>();
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const file = this.pathOf(names[next++]!);
        dirs.add(path.dirname(file));
        const handle = await fs.open(file, 'r');
        try {
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const shards = [...dirs, ...new Set([...dirs].map((d) => path.dirname(d))), this.root];
    next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < shards.length) await syncDir(shards[next++]!);
      }),
    );
  }

  /** Size of a stored blob, or null when there is none. */
  async size(sha256: string): Promise<number | null> {
    try {
      const st = await fs.lstat(this.pathOf(sha256));
      return st.isFile() ? st.size : null;
    } catch {
      return null;
    }
  }

  /** A stream of a blob's bytes, `start`..`end` inclusive when given (as for HTTP Range). */
  open(sha256: string, range?: { start: number; end: number }): ReadStream {
    return createReadStream(this.pathOf(sha256), range);
  }

  /** Every stored blob name (walks the shards). */
  async *list(): AsyncGenerator<string> {
    for (const a of await readdirOrEmpty(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(a)) continue;
      for (const b of await readdirOrEmpty(path.join(this.root, a))) {
        if (!/^[0-9a-f]{2}$/.test(b)) continue;
        for (const name of await readdirOrEmpty(path.join(this.root, a, b))) {
          if (isSha256(name) && name.startsWith(a + b)) yield name;
        }
      }
    }
  }

  /**
   * Removes blobs no row refers to and temporary files left by a crash, both only once older than
   * `graceMs`. `referenced` answers which of the names it is given are still in use. Returns how
   * many blobs and temporary files were removed.
   */
  async sweep(
    referenced: (names: string[]) => Promise<Set<string>>,
    opts: { now: number; graceMs: number },
  ): Promise<{ blobs: number; temporary: number }> {
    const cutoff = opts.now - opts.graceMs;
    let temporary = 0;
    for (const name of await readdirOrEmpty(this.tmpDir)) {
      const file = path.join(this.tmpDir, name);
      const st = await fs.lstat(file).catch(() => null);
      if (st && st.mtimeMs < cutoff) {
        await fs.rm(file, { force: true });
        temporary++;
      }
    }
    let blobs = 0;
    let batch: string[] = [];
    const flush = async (): Promise<void> => {
      const used = await referenced(batch);
      for (const name of batch) {
        if (used.has(name)) continue;
        const file = this.pathOf(name);
        const st = await fs.lstat(file).catch(() => null);
        if (st && st.mtimeMs < cutoff) {
          await fs.rm(file, { force: true });
          blobs++;
        }
      }
      batch = [];
    };
    for await (const name of this.list()) {
      batch.push(name);
      if (batch.length >= 500) await flush();
    }
    if (batch.length > 0) await flush();
    return { blobs, temporary };
  }
}

/**
 * A file streamed into the store's temporary folder by `BlobStore.stage`: its hash and size are
 * known, it can be read at `path` (to check its type), and it becomes a blob only on `commit`.
 * `discard` removes it unless it was committed, so callers call it in a `finally`.
 */
export class StagedBlob {
  private state: 'staged' | 'committed' | 'discarded' = 'staged';

  constructor(
    private readonly store: BlobStore,
    /** The temporary file, readable until committed or discarded. */
    readonly path: string,
    readonly sha256: string,
    readonly sizeBytes: number,
    /** Whether the rename is synced (false: the caller syncs, `BlobStore.syncAll`). */
    private readonly sync = true,
  ) {}

  /** Moves the file into place under its sha256 (keeping an existing copy of the same bytes). */
  async commit(): Promise<StoredBlob> {
    if (this.state !== 'staged') throw new Error(`a ${this.state} blob cannot be committed`);
    const dest = this.store.pathOf(this.sha256);
    await fs.mkdir(path.dirname(dest), { recursive: true });
    if (await exists(dest)) {
      // Same bytes already stored: keep the old file, refresh its age for the sweep's grace.
      await fs.unlink(this.path);
      const now = new Date();
      await fs.utimes(dest, now, now);
    } else {
      await fs.rename(this.path, dest);
      if (this.sync) await syncDir(path.dirname(dest));
    }
    this.state = 'committed';
    return { sha256: this.sha256, sizeBytes: this.sizeBytes };
  }

  /** Removes the temporary file; nothing once committed or already discarded. */
  async discard(): Promise<void> {
    if (this.state !== 'staged') return;
    this.state = 'discarded';
    await fs.unlink(this.path).catch(() => undefined);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch {
    return false;
  }
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Makes a rename durable: fsync of the folder that holds the new name. */
async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
