import path from 'node:path';

import type { Clock } from '../../lib/clock.js';
import { HOUR_MS } from '../../lib/clock.js';

import { BlobStore } from './blob-store.js';

/**
 * Answers which of the given blob names (sha256) rows of one area still use: attachments,
 * avatars, emoji, plugin bundles. An area registers its source once at start-up.
 */
export type BlobReferenceSource = (names: string[]) => Promise<Iterable<string>>;

/** How long a blob no row names is kept before the sweep removes it (a row commits within it). */
export const BLOB_SWEEP_GRACE_MS = HOUR_MS;

/**
 * The instance's file storage: one `BlobStore` under `SVC_DATA_DIR/blobs`, and the list of
 * reference sources the sweep asks. A blob is in use while any source names it; the sweep removes
 * the others (docs/files.md).
 */
export class FileStorage {
  readonly blobs: BlobStore;
  private readonly sources = new Map<string, BlobReferenceSource>();

  constructor(
    dataDir: string,
    private readonly clock: Clock,
  ) {
    this.blobs = new BlobStore(path.join(dataDir, 'blobs'));
  }

  /** Adds the rows of one area to what keeps a blob alive. A name is registered once. */
  addReferenceSource(name: string, source: BlobReferenceSource): void {
    if (this.sources.has(name)) throw new Error(`blob reference source ${name} already added`);
    this.sources.set(name, source);
  }

  /** Removes blobs no source names, and crash leftovers, older than the grace period. */
  async sweep(): Promise<{ blobs: number; temporary: number }> {
    return this.blobs.sweep(
      async (names) => {
        const used = new Set<string>();
        for (const source of this.sources.values()) {
          for (const name of await source(names)) used.add(name);
        }
        return used;
      },
      { now: this.clock.now().getTime(), graceMs: BLOB_SWEEP_GRACE_MS },
    );
  }
}
