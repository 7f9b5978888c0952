import { sql } from 'kysely';

import type { Dialect, Executor } from '../../db/database.js';
import { bulkInsert } from '../../db/statements/bulk-insert.js';

// The import map (migration 0024): what each item of an export became.

const CHUNK = 500;

/** The target ids of those of `sourceIds` already imported, by source id. */
export async function mappedIds(
  db: Executor,
  source: string,
  kind: string,
  sourceIds: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < sourceIds.length; i += CHUNK) {
    const rows = await db
      .selectFrom('import_map')
      .select(['sourceId', 'targetId'])
      .where('source', '=', source)
      .where('kind', '=', kind)
      .where('sourceId', 'in', sourceIds.slice(i, i + CHUNK))
      .execute();
    for (const r of rows) out.set(r.sourceId, r.targetId);
  }
  return out;
}

/** Records what items became, in the transaction that made them. */
export async function recordMappings(
  db: Executor,
  source: string,
  kind: string,
  pairs: ReadonlyArray<readonly [sourceId: string, targetId: string]>,
): Promise<void> {
  await bulkInsert(
    db,
    'import_map',
    ['source', 'kind', 'sourceId', 'targetId'],
    pairs.map(([sourceId, targetId]) => ({ source, kind, sourceId, targetId })),
  );
}

/**
 * Brings PostgreSQL's statistics of the map up to date. An import grows it by thousands of rows a
 * second, faster than autovacuum looks; with statistics from when it was nearly empty, the
 * planner scans every row of a kind for each lookup instead of using the key (each batch slower
 * than the one before). SQLite has no such planner statistics to age.
 */
export async function refreshMapStatistics(db: Executor, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`analyze import_map`.execute(db);
}

// An import commits a batch at a time without waiting for the disk at each commit: a crash
// loses at most the last batches, each whole (one transaction with its import-map rows), and
// the next run writes them again. What the command reports as done is on the disk: SQLite
// syncs at the checkpoint that ends the import, PostgreSQL at the next commit that waits (the
// read markers', the last transaction of an import that wrote messages).

/**
 * SQLite, for the import's connection: `synchronous=NORMAL` (WAL synced at checkpoints, not at
 * each commit) and a checkpoint per 40 MiB of WAL instead of 4; `false` puts back the CLI's
 * settings and checkpoints, so everything written is synced before the command answers.
 */
export async function bulkCommits(db: Executor, dialect: Dialect, on: boolean): Promise<void> {
  if (dialect !== 'sqlite') return;
  if (on) {
    await sql`pragma synchronous = NORMAL`.execute(db);
    await sql`pragma wal_autocheckpoint = 10000`.execute(db);
    return;
  }
  await sql`pragma synchronous = FULL`.execute(db);
  await sql`pragma wal_autocheckpoint = 1000`.execute(db);
  await sql`pragma wal_checkpoint(PASSIVE)`.execute(db);
}

/** PostgreSQL: this transaction commits without waiting for its WAL to reach the disk. */
export async function relaxCommit(db: Executor, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') await sql`set local synchronous_commit = off`.execute(db);
}
