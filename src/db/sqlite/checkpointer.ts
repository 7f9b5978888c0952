import { Worker } from 'node:worker_threads';

// Runs in a worker thread with its own SQLite connection. A PASSIVE checkpoint copies committed
// WAL pages into the database file without blocking the writer, so the server's own
// connection never pays for a checkpoint (and its flush of the main file) inside a commit.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Sqlite = require(workerData.driver);
const db = new Sqlite(workerData.file);
db.pragma('busy_timeout = 1000');
const run = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
};
const timer = setInterval(run, workerData.intervalMs);
parentPort.on('message', (msg) => {
  if (msg === 'stop') {
    clearInterval(timer);
    run();
    db.close();
    parentPort.postMessage('stopped');
  }
});
`;

/** Checkpoints the WAL of `file` from a worker thread every `intervalMs`. */
export class WalCheckpointer {
  private readonly worker: Worker;

  constructor(
    file: string,
    driverPath: string,
    intervalMs = 250,
    onError: (msg: string) => void = () => {},
  ) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, driver: driverPath, intervalMs },
    });
    this.worker.unref();
    this.worker.on('message', (msg: unknown) => {
      if (msg && typeof msg === 'object' && 'error' in msg)
        onError(String((msg as { error: unknown }).error));
    });
    this.worker.on('error', (err) => onError(err.message));
  }

  /** Runs a last checkpoint and ends the worker. */
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        void this.worker.terminate().then(() => resolve());
      }, 5000);
      this.worker.once('message', () => {
        clearTimeout(timer);
        void this.worker.terminate().then(() => resolve());
      });
      this.worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.worker.postMessage('stop');
    });
  }
}
