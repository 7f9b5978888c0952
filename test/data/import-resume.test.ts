import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestDatabase, PG_URL, type TestDatabase } from '../_util/app.js';
import { cli } from '../cli/cli-io.js';

import { generateSlackExport, zipFolder, type GeneratedExport } from './_slack-generator.js';

// A large Slack export (generated here, not kept in the repository) imported by the real `svc`
// process, killed with SIGKILL part-way, then imported again: the second run finishes the work,
// and nothing is missing, half-written or there twice.

const PER_CHANNEL = 2000;
const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Rows of a table, read straight from the test database. */
async function count(d: TestDatabase, sql: string): Promise<number> {
  if (!d.pgSchema) {
    const db = new Sqlite(path.join(d.dataDir, 'svc.sqlite'), { readonly: true });
    try {
      return Number((db.prepare(sql).get() as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`set search_path to ${d.pgSchema}`);
    return Number((await client.query<{ n: string }>(sql)).rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe('svc import after a crash', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-import-resume-'));
  const zip = path.join(scratch, 'large.zip');
  let generated: GeneratedExport;
  let d: TestDatabase;

  beforeAll(async () => {
    generated = generateSlackExport(path.join(scratch, 'large'), {
      users: 40,
      channels: 3,
      messagesPerChannel: PER_CHANNEL,
    });
    await zipFolder(generated.dir, zip);
    d = await createTestDatabase();
    expect((await cli(['migrate'], d.env)).code).toBe(0);
  });
  afterAll(async () => {
    await d?.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('goes on where a killed run stopped', { timeout: 120_000 }, async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/index.ts', 'import', 'slack', zip, '--batch', '100'],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ...d.env },
        stdio: 'ignore',
      },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Kill it once some batches have committed (and long before the last).
    const deadline = Date.now() + 60_000;
    let seen = 0;
    while (Date.now() < deadline) {
      seen = await count(d, "select count(*) as n from import_map where kind = 'message'").catch(
        () => 0,
      );
      if (seen >= 300) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const messagesAtKill = await count(d, 'select count(*) as n from message');
    expect(messagesAtKill).toBeGreaterThanOrEqual(300);
    expect(messagesAtKill).toBeLessThan(generated.messages);
    // Whole batches only: every message written has its map row, and no more.
    expect(await count(d, "select count(*) as n from import_map where kind = 'message'")).toBe(
      messagesAtKill,
    );

    const again = await cli(['import', 'slack', zip], d.env);
    expect(again.code).toBe(0);
    const report = JSON.parse(again.out);
    expect(report.existing.messages).toBe(messagesAtKill);
    expect(report.created.messages).toBe(generated.messages - messagesAtKill);
    expect(report.files).toHaveLength(generated.files - countFilesBefore(messagesAtKill));

    expect(await count(d, 'select count(*) as n from message')).toBe(generated.messages);
    // Every message is searchable: the killed run's terms came from its worker thread (tsx).
    expect(await count(d, 'select count(*) as n from message_search')).toBe(generated.messages);
    expect(
      await count(d, 'select count(*) as n from message where "threadRootId" is not null'),
    ).toBe(generated.replies);
    // Thread counts hold across the two runs: each root counts the replies it has.
    expect(await count(d, 'select sum("replyCount") as n from message')).toBe(generated.replies);
    expect(
      await count(
        d,
        `select count(*) as n from message r where r."replyCount" <>
           (select count(*) from message c where c."threadRootId" = r.id)`,
      ),
    ).toBe(0);
    expect(await count(d, 'select count(*) as n from reaction')).toBe(generated.reactions);
    expect(await count(d, "select count(*) as n from account where username like 'person%'")).toBe(
      40,
    );
    expect(await count(d, 'select count(*) as n from message_search')).toBe(generated.messages);
  });
});

/**
 * Files of messages written before the kill: the generator shares one every fiftieth message of
 * a channel, and channels are written in order.
 */
function countFilesBefore(written: number): number {
  let files = 0;
  for (let c = 0; c < 3; c++) {
    const inChannel = Math.max(0, Math.min(PER_CHANNEL, written - c * PER_CHANNEL));
    files += Math.ceil(inChannel / 50);
  }
  return files;
}
