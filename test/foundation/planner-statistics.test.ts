import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';

import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open.js';

// SQLite: svc's plans are made for a planner without statistics, so the statistics an `ANALYZE`
// left in the file are removed when it is opened (src/db/sqlite/statistics.ts; docs/operations.md,
// "SQLite's statistics"). Counts taken while the sessions were few made the session read scan
// every session and account; STAT4's samples made SQLite prepare it again on every run.

const SESSION_READ = `explain query plan select session.id, account.username from session
  join account on account.id = session."accountId" where session."tokenHash" = ?`;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function addPeople(sqlite: Sqlite.Database, from: number, count: number) {
  const account = sqlite.prepare(
    `insert into account (id, username, "usernameKey", "createdAt") values (?, ?, ?, 0)`,
  );
  const session = sqlite.prepare(`insert into session (id, "tokenHash", "accountId", "createdAt",
    "expiresAt") values (?, ?, ?, 0, 9000000000000)`);
  sqlite.transaction(() => {
    for (let i = from; i < from + count; i++) {
      account.run(`a${i}`, `person${i}`, `person${i}`);
      session.run(`s${i}`, `hash${i}`, `a${i}`);
    }
  })();
}

/** A data directory whose SQLite file has svc's tables and nothing else. */
async function migratedDataDir(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-stats-'));
  dirs.push(dataDir);
  const db = openDatabase({ url: null, dataDir });
  await migrateToLatest(db);
  await db.close();
  return dataDir;
}

const plan = (rows: { detail: string }[]) => rows.map((r) => r.detail).join(' | ');

describe('SQLite planner statistics', () => {
  it('are removed at open, so a statistic taken with one session does not make reads scan', async () => {
    const dataDir = await migratedDataDir();

    // As an operator's `ANALYZE` early in a server's life would leave it: one person then, many now.
    const file = path.join(dataDir, 'svc.sqlite');
    const raw = new Sqlite(file);
    addPeople(raw, 0, 1);
    raw.exec('analyze');
    addPeople(raw, 1, 300);
    expect(plan(raw.prepare(SESSION_READ).all('hash7') as { detail: string }[])).toMatch(
      /SCAN session/,
    );
    raw.close();

    const db = openDatabase({ url: null, dataDir });
    try {
      for (const table of ['sqlite_stat1', 'sqlite_stat4']) {
        const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(
          table,
        )}`.execute(db.kysely);
        expect(rows[0]?.n).toBe(0);
      }
      // The open connection itself plans without them (they are read with the schema).
      const { rows } = await sql<{
        detail: string;
      }>`${sql.raw(SESSION_READ.replace('?', "'hash7'"))}`.execute(db.kysely);
      expect(plan(rows)).toMatch(/SEARCH session USING INDEX/);
      expect(plan(rows)).toMatch(/SEARCH account USING INDEX/);
    } finally {
      await db.close();
    }
  });

  it('leave a file without statistics as it is, without a write', async () => {
    const dataDir = await migratedDataDir();
    const file = path.join(dataDir, 'svc.sqlite');
    const raw = new Sqlite(file);
    const version = () => raw.pragma('data_version', { simple: true }) as number;
    const before = version();
    const db = openDatabase({ url: null, dataDir });
    await db.close();
    expect(version()).toBe(before);
    expect(
      raw.prepare(`select name from sqlite_schema where name like 'sqlite_stat%'`).all(),
    ).toEqual([]);
    raw.close();
  });
});
