import { sql } from 'kysely';

import type { Db } from '../database.js';

/**
 * PostgreSQL: whether the server runs without autovacuum. Its planner's statistics then never
 * refresh on their own, and as tables grow from empty the plans of the hot statements keep
 * assuming tiny tables (whole-table scans per request). False on SQLite and when the setting
 * cannot be read.
 */
export async function autovacuumOff(db: Db): Promise<boolean> {
  if (db.dialect !== 'postgres') return false;
  try {
    const { rows } = await sql<{ autovacuum: string }>`show autovacuum`.execute(db.kysely);
    return rows[0]?.autovacuum === 'off';
  } catch {
    return false;
  }
}
