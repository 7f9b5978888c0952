import { sql } from 'kysely';

import type { Dialect, Executor } from '../../db/database.js';

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
  for (let i = 0; i < pairs.length; i += CHUNK) {
    await db
      .insertInto('import_map')
      .values(
        pairs
          .slice(i, i + CHUNK)
          .map(([sourceId, targetId]) => ({ source, kind, sourceId, targetId })),
      )
      .execute();
  }
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
