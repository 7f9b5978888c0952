import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { BlobStore, BlobTooLargeError, isSha256 } from '../../src/services/files/blob-store.js';

let root: string;
let store: BlobStore;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-blobs-'));
  store = new BlobStore(root);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

function sha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function tmpFiles(): Promise<string[]> {
  return fs.readdir(path.join(root, 'tmp')).catch(() => []);
}

describe('BlobStore', () => {
  it('stores bytes under their sha256 in sharded folders, once for the same bytes', async () => {
    const bytes = randomBytes(300_000);
    const a = await store.put(Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]), {
      maxBytes: 1_000_000,
    });
    expect(a).toEqual({ sha256: sha(bytes), sizeBytes: bytes.length });
    const file = path.join(root, a.sha256.slice(0, 2), a.sha256.slice(2, 4), a.sha256);
    expect(store.pathOf(a.sha256)).toBe(file);
    expect(Buffer.compare(await fs.readFile(file), bytes)).toBe(0);
    const b = await store.put(Readable.from([bytes]), { maxBytes: 1_000_000 });
    expect(b).toEqual(a);
    expect(await tmpFiles()).toEqual([]);
    expect(await store.size(a.sha256)).toBe(bytes.length);
    const names: string[] = [];
    for await (const n of store.list()) names.push(n);
    expect(names).toEqual([a.sha256]);
  });

  it('stores an empty stream as the empty blob', async () => {
    const blob = await store.put(Readable.from([]), { maxBytes: 10 });
    expect(blob).toEqual({ sha256: sha(Buffer.alloc(0)), sizeBytes: 0 });
  });

  it('refuses as soon as the stream passes the limit, without reading the rest', async () => {
    let produced = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      for (;;) {
        produced++;
        yield Buffer.alloc(64 * 1024, 1);
      }
    }
    await expect(store.put(endless(), { maxBytes: 1024 * 1024 })).rejects.toBeInstanceOf(
      BlobTooLargeError,
    );
    expect(produced).toBe(17);
    expect(await tmpFiles()).toEqual([]);
    // exactly at the limit is accepted
    const ok = await store.put(Readable.from([Buffer.alloc(1024 * 1024)]), {
      maxBytes: 1024 * 1024,
    });
    expect(ok.sizeBytes).toBe(1024 * 1024);
  });

  it('removes the temporary file when the source fails mid-stream', async () => {
    let seenTemporary = 0;
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.alloc(5000, 2);
      // resumed once the first chunk is written: the temporary file exists now
      seenTemporary = (await tmpFiles()).length;
      throw new Error('client went away');
    }
    await expect(store.put(failing(), { maxBytes: 1_000_000 })).rejects.toThrow('client went away');
    expect(seenTemporary).toBe(1);
    expect(await tmpFiles()).toEqual([]);
    const names: string[] = [];
    for await (const n of store.list()) names.push(n);
    expect(names).toEqual([]);
  });

  it('reads a byte range', async () => {
    const blob = await store.put(Readable.from([Buffer.from('hello, world')]), { maxBytes: 100 });
    expect(await text(store.open(blob.sha256, { start: 7, end: 11 }))).toBe('world');
    expect(await text(store.open(blob.sha256))).toBe('hello, world');
  });

  it('never turns a name that is not a sha256 into a path', () => {
    for (const bad of ['../etc/passwd', 'A'.repeat(64), 'a'.repeat(63), `${'a'.repeat(63)}/`, '']) {
      expect(isSha256(bad)).toBe(false);
      expect(() => store.pathOf(bad)).toThrow('not a blob name');
    }
  });

  it('sweeps unreferenced blobs and crash leftovers once past the grace period', async () => {
    const kept = await store.put(Readable.from([Buffer.from('kept')]), { maxBytes: 100 });
    const old = await store.put(Readable.from([Buffer.from('old')]), { maxBytes: 100 });
    const young = await store.put(Readable.from([Buffer.from('young')]), { maxBytes: 100 });
    await fs.writeFile(path.join(root, 'tmp', 'crash-leftover'), 'partial');
    const past = new Date(Date.now() - 2 * 3600_000);
    for (const f of [store.pathOf(kept.sha256), store.pathOf(old.sha256)]) {
      await fs.utimes(f, past, past);
    }
    await fs.utimes(path.join(root, 'tmp', 'crash-leftover'), past, past);
    const asked: string[] = [];
    const result = await store.sweep(
      async (names) => {
        asked.push(...names);
        return new Set(names.filter((n) => n === kept.sha256));
      },
      { now: Date.now(), graceMs: 3600_000 },
    );
    expect(result).toEqual({ blobs: 1, temporary: 1 });
    expect(asked.sort()).toEqual([kept.sha256, old.sha256, young.sha256].sort());
    expect(await store.size(kept.sha256)).toBe(4);
    expect(await store.size(old.sha256)).toBeNull();
    expect(await store.size(young.sha256)).toBe(5);
    expect(await tmpFiles()).toEqual([]);
  });
});
