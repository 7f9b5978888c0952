import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HOUR_MS, ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../_util/app.js';

let t: TestApp;
const clock = new ManualClock();

beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t.close();
});

describe('blob-sweep job', () => {
  it('keeps blobs a source names and removes the rest once past the grace period', async () => {
    const files = t.ctx.services.files;
    expect(files.blobs.root).toBe(path.join(t.config.dataDir, 'blobs'));
    const used = await files.blobs.put(Readable.from([Buffer.from('used')]), { maxBytes: 100 });
    const unused = await files.blobs.put(Readable.from([Buffer.from('unused')]), {
      maxBytes: 100,
    });
    const kept = new Set([used.sha256]);
    files.addReferenceSource('test-rows', async (names) => names.filter((n) => kept.has(n)));
    expect(() => files.addReferenceSource('test-rows', async () => [])).toThrow('already added');

    // Within the grace period nothing goes, referenced or not.
    expect(await t.ctx.scheduler.runOnce('blob-sweep')).toBe(true);
    expect(await files.blobs.size(unused.sha256)).toBe(6);

    clock.advance(2 * HOUR_MS);
    expect(await t.ctx.scheduler.runOnce('blob-sweep')).toBe(true);
    expect(await files.blobs.size(used.sha256)).toBe(4);
    expect(await files.blobs.size(unused.sha256)).toBeNull();

    // The last row gone, the next sweep removes the blob.
    kept.clear();
    expect(await files.sweep()).toEqual({ blobs: 1, temporary: 0 });
    expect(await fs.readdir(path.join(t.config.dataDir, 'blobs', 'tmp'))).toEqual([]);
  });
});
