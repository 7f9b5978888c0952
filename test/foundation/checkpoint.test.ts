import fs from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type TestApp } from '../_util/app.js';

// SQLite only: the server checkpoints the WAL from a worker thread (src/db/sqlite/checkpointer.ts), so
// commits never pay for copying pages into the main file. Commits themselves only checkpoint
// past 10,000 pages, so the main file grows only through the worker.
describe.skipIf(TEST_DB !== 'sqlite')('background WAL checkpoint', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('copies committed pages into the database file without a checkpoint in any commit', async () => {
    const file = t.ctx.db.file as string;
    const before = fs.statSync(file).size;
    const rows = Array.from({ length: 400 }, (_, i) => ({
      cidr: `10.${Math.floor(i / 256)}.${i % 256}.0/24`,
      reason: 'x'.repeat(400),
      createdAt: i,
      expiresAt: null,
      createdBy: 'test',
    }));
    await t.ctx.db.kysely.insertInto('ip_block').values(rows).execute();
    const deadline = Date.now() + 10_000;
    while (fs.statSync(file).size <= before && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(fs.statSync(file).size).toBeGreaterThan(before + 100_000);
  });
});
