import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { openDatabase } from '../../src/db/open.js';
import { cli } from '../cli/cli-io.js';

// docs/security.md, "Secrets at rest": the SQLite database holds the server's keys, so it and its
// WAL are created 0600, and a database other users may read stops the process at start.

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-private-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe.skipIf(process.platform === 'win32')('the key-holding database file', () => {
  it('is created readable by its owner only, WAL and shared memory too', async () => {
    const dataDir = tempDir();
    const previous = process.umask(0o022);
    try {
      const db = openDatabase({ url: null, dataDir });
      await db.kysely.schema.createTable('t').addColumn('x', 'integer').execute();
      const file = path.join(dataDir, 'svc.sqlite');
      expect(modeOf(file)).toBe(0o600);
      expect(modeOf(`${file}-wal`)).toBe(0o600);
      expect(modeOf(`${file}-shm`)).toBe(0o600);
      await db.close();
    } finally {
      process.umask(previous);
    }
  });

  it('stops a process at start when others may read it, saying what to run', async () => {
    const dataDir = tempDir();
    const file = path.join(dataDir, 'svc.sqlite');
    const db = openDatabase({ url: null, dataDir });
    await db.close();
    for (const [target, mode] of [
      [file, 0o644],
      [file, 0o660],
      [`${file}-wal`, 0o604],
    ] as const) {
      fs.writeFileSync(`${file}-wal`, '', { flag: 'a' });
      fs.chmodSync(target, mode);
      expect(() => openDatabase({ url: null, dataDir })).toThrow(
        `${target} holds the server's keys and is open to other users (mode 0${mode.toString(8)}); make it readable by the server's user only: chmod 600 ${file}*`,
      );
      if (mode === 0o644) {
        // The same through the command line: one line, exit 1, nothing opened.
        const run = await cli(['audit', 'list'], { SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn' });
        expect(run.code).toBe(1);
        expect(run.err).toMatch(/^svc: .* holds the server's keys and is open to other users/);
      }
      fs.chmodSync(target, 0o600);
    }
    fs.rmSync(`${file}-wal`);
    const again = openDatabase({ url: null, dataDir });
    await again.close();
  });
});
