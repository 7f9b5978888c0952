import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';

import type { BlobStore } from '../../services/files/index.js';
import { readVersion } from '../../version.js';
import { BackupError } from '../manifest.js';
import type { Progress } from '../progress.js';

import {
  ENCRYPTION_NOTE,
  EXPORT_FILES_DIR,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  EXPORT_MANIFEST,
  type ExportManifest,
  type ExportPart,
  type ExportScope,
} from './format.js';

/** One JSON Lines file being written: a record a line, hashed and counted as it goes. */
export class PartWriter {
  private readonly hash = createHash('sha256');
  rows = 0;
  bytes = 0;

  constructor(
    readonly file: string,
    readonly record: string,
    private readonly out: WriteStream,
    private readonly progress: Progress,
  ) {}

  async write(value: object): Promise<void> {
    const line = `${JSON.stringify(value)}\n`;
    this.hash.update(line);
    this.rows++;
    this.bytes += Buffer.byteLength(line);
    this.progress.add({ rows: 1 });
    if (!this.out.write(line)) await once(this.out, 'drain');
  }

  async close(): Promise<ExportPart> {
    this.out.end();
    await once(this.out, 'finish');
    return {
      file: this.file,
      record: this.record,
      rows: this.rows,
      bytes: this.bytes,
      sha256: this.hash.digest('hex'),
    };
  }
}

/**
 * Writes an export into a new folder: the JSON Lines parts, the stored files the records name
 * (each once), and the manifest last. A failure removes the folder.
 */
export class ExportWriter {
  private readonly parts: PartWriter[] = [];
  private readonly copied = new Map<string, number>();

  constructor(
    readonly dir: string,
    private readonly blobs: BlobStore,
    private readonly progress: Progress,
  ) {}

  /** Makes `dir`, refusing one that exists with anything in it. */
  async open(): Promise<void> {
    const entries = await fs.readdir(this.dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return [];
      throw err;
    });
    if (entries.length > 0) {
      throw new BackupError(`${this.dir} is not empty; give a new folder for the export`);
    }
    await fs.mkdir(path.join(this.dir, EXPORT_FILES_DIR), { recursive: true });
  }

  part(file: string, record: string): PartWriter {
    const w = new PartWriter(
      file,
      record,
      createWriteStream(path.join(this.dir, file)),
      this.progress,
    );
    this.parts.push(w);
    this.progress.update({ step: file });
    return w;
  }

  /**
   * Copies the stored file `sha256` into files/ (once however often it is named); its path in
   * the export, or null when the store no longer has it (the record says so by a null `file`).
   */
  async file(sha256: string | null): Promise<string | null> {
    if (sha256 === null) return null;
    const rel = `${EXPORT_FILES_DIR}/${sha256}`;
    if (this.copied.has(sha256)) return rel;
    try {
      await fs.copyFile(this.blobs.pathOf(sha256), path.join(this.dir, rel));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const { size } = await fs.stat(path.join(this.dir, rel));
    this.copied.set(sha256, size);
    this.progress.add({ files: 1, bytes: size });
    return rel;
  }

  /** Closes every part and writes the manifest. */
  async finish(scope: ExportScope, createdAt: Date): Promise<ExportManifest> {
    const parts: ExportPart[] = [];
    for (const p of this.parts) parts.push(await p.close());
    const manifest: ExportManifest = {
      format: EXPORT_FORMAT,
      formatVersion: EXPORT_FORMAT_VERSION,
      svcVersion: readVersion(),
      createdAt: createdAt.toISOString(),
      scope,
      parts,
      files: {
        count: this.copied.size,
        bytes: [...this.copied.values()].reduce((a, b) => a + b, 0),
      },
      encryption: ENCRYPTION_NOTE,
    };
    await fs.writeFile(
      path.join(this.dir, EXPORT_MANIFEST),
      `${JSON.stringify(manifest, null, 2)}\n`,
    );
    return manifest;
  }

  /** Removes what was written (after a failure). */
  async discard(): Promise<void> {
    for (const p of this.parts) await p.close().catch(() => undefined);
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}
