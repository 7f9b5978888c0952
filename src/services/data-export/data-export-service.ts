import fs from 'node:fs/promises';
import path from 'node:path';

import type { Logger } from 'pino';

import type { UserActor } from '../../auth/actor.js';
import { exportAccount } from '../../data/export/export.js';
import { zipFolder } from '../../data/export/zip.js';
import { Progress } from '../../data/progress.js';
import type { Db } from '../../db/database.js';
import { notFound, rateLimited } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { BlobStore } from '../files/index.js';

// A person's download of their own data (docs/export.md, "Downloading your own data"): an export
// of their account made in the background and kept as a ZIP archive for a week. Nothing is in
// the database: each export is a status file and its archive under SVC_DATA_DIR/exports/<account>/,
// which every process on the same SVC_DATA_DIR sees; the process that accepted the request
// makes it.

/** How long a finished archive is kept. */
export const EXPORT_KEEP_MS = 7 * 24 * 3600_000;
/** At most one export an hour per person (a finished one counts; a failed one does not). */
export const EXPORT_INTERVAL_MS = 3600_000;
/** A "preparing" export older than this was cut short (its process stopped): shown as failed. */
const STALE_MS = 3600_000;

export type DataExportState = 'preparing' | 'ready' | 'failed';

export interface DataExportView {
  id: string;
  state: DataExportState;
  requestedAt: number;
  readyAt: number | null;
  expiresAt: number | null;
  sizeBytes: number | null;
  /** Why it failed, in words; null otherwise. */
  error: string | null;
}

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class DataExportService {
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      db: Db;
      blobs: BlobStore;
      dataDir: string;
      clock: Clock;
      log: Logger;
    },
  ) {}

  private dirOf(accountId: string): string {
    return path.join(this.deps.dataDir, 'exports', accountId);
  }

  /** The person's exports, newest first; expired ones are deleted on the way. */
  async list(actor: UserActor): Promise<DataExportView[]> {
    const dir = this.dirOf(actor.accountId);
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    const now = this.deps.clock.now().getTime();
    const out: DataExportView[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const view = await readStatus(path.join(dir, name));
      if (!view) continue;
      if (view.expiresAt !== null && view.expiresAt <= now) {
        await this.remove(dir, view.id);
        continue;
      }
      if (
        view.state === 'preparing' &&
        !this.running.has(view.id) &&
        now - view.requestedAt > STALE_MS
      ) {
        view.state = 'failed';
        view.error = 'the export was interrupted (the server restarted); ask for a new one';
      }
      out.push(view);
    }
    return out.sort((a, b) => b.requestedAt - a.requestedAt);
  }

  /**
   * Starts an export of the person's account, or answers the one being prepared. RATE_LIMITED
   * within an hour of the last one that finished.
   */
  async request(actor: UserActor): Promise<DataExportView> {
    const existing = await this.list(actor);
    const preparing = existing.find((e) => e.state === 'preparing');
    if (preparing) return preparing;
    const now = this.deps.clock.now().getTime();
    const last = existing.find((e) => e.state === 'ready');
    if (last && now - last.requestedAt < EXPORT_INTERVAL_MS) {
      const wait = Math.ceil((last.requestedAt + EXPORT_INTERVAL_MS - now) / 1000);
      throw rateLimited(wait, 'you asked for a copy of your data less than an hour ago');
    }
    const view: DataExportView = {
      id: newId(),
      state: 'preparing',
      requestedAt: now,
      readyAt: null,
      expiresAt: null,
      sizeBytes: null,
      error: null,
    };
    const dir = this.dirOf(actor.accountId);
    await fs.mkdir(dir, { recursive: true });
    await writeStatus(dir, view);
    const job = this.make(actor, dir, view).finally(() => this.running.delete(view.id));
    this.running.set(view.id, job);
    return view;
  }

  /** The archive of a ready export of the person's, to send; NOT_FOUND otherwise. */
  async download(
    actor: UserActor,
    id: string,
  ): Promise<{ file: string; sizeBytes: number; fileName: string }> {
    if (!ID.test(id)) throw notFound('export');
    const view = (await this.list(actor)).find((e) => e.id === id);
    if (!view || view.state !== 'ready') throw notFound('export');
    const file = path.join(this.dirOf(actor.accountId), `${id}.zip`);
    const { size } = await fs.stat(file).catch(() => {
      throw notFound('export');
    });
    const day = new Date(view.requestedAt).toISOString().slice(0, 10);
    return { file, sizeBytes: size, fileName: `svc-data-${actor.username}-${day}.zip` };
  }

  /** Waits for the exports this process is making (shutdown). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.running.values()]);
  }

  private async make(actor: UserActor, dir: string, view: DataExportView): Promise<void> {
    const work = path.join(dir, `${view.id}.tmp`);
    const zip = path.join(dir, `${view.id}.zip`);
    try {
      await exportAccount(
        { db: this.deps.db, blobs: this.deps.blobs },
        actor.accountId,
        work,
        new Progress('export', () => {}, false),
      );
      const day = new Date(view.requestedAt).toISOString().slice(0, 10);
      const sizeBytes = await zipFolder(work, `${zip}.part`, `svc-data-${actor.username}-${day}`);
      await fs.rename(`${zip}.part`, zip);
      const readyAt = this.deps.clock.now().getTime();
      await writeStatus(dir, {
        ...view,
        state: 'ready',
        readyAt,
        expiresAt: readyAt + EXPORT_KEEP_MS,
        sizeBytes,
      });
    } catch (err) {
      this.deps.log.error({ err, exportId: view.id }, 'data export failed');
      await fs.rm(`${zip}.part`, { force: true });
      await writeStatus(dir, {
        ...view,
        state: 'failed',
        error: 'the export could not be made; ask for a new one, or ask the operator',
      }).catch(() => undefined);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  }

  private async remove(dir: string, id: string): Promise<void> {
    for (const f of [`${id}.zip`, `${id}.json`]) await fs.rm(path.join(dir, f), { force: true });
  }
}

async function readStatus(file: string): Promise<DataExportView | null> {
  try {
    const v = JSON.parse(await fs.readFile(file, 'utf8')) as DataExportView;
    return ID.test(v.id) ? v : null;
  } catch {
    return null;
  }
}

/** Writes a status file whole (a temporary file renamed into place). */
async function writeStatus(dir: string, view: DataExportView): Promise<void> {
  const tmp = path.join(dir, `${view.id}.json.tmp`);
  await fs.writeFile(tmp, JSON.stringify(view));
  await fs.rename(tmp, path.join(dir, `${view.id}.json`));
}
