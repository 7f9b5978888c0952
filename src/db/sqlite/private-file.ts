import fs from 'node:fs';

/**
 * The SQLite database holds the server's keys (signing, franking, cookie; docs/keys.md) and every
 * session's and invite's hash, so it is created readable by its owner only (0600, as are its WAL
 * and shared-memory files, which SQLite creates with the database's mode), and a database file
 * that other users may read or write stops the process at start with what to run. On Windows
 * (no POSIX modes) nothing is checked.
 */
export function ensurePrivateDatabaseFile(file: string): void {
  if (process.platform === 'win32') return;
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    const st = fs.statSync(f, { throwIfNoEntry: false });
    if (!st || (st.mode & 0o077) === 0) continue;
    const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
    throw new Error(
      `${f} holds the server's keys and is open to other users (mode ${mode}); make it readable by the server's user only: chmod 600 ${file}*`,
    );
  }
}
