import type Sqlite from 'better-sqlite3';

/**
 * Removes the query planner's statistics (`sqlite_stat1`, `sqlite_stat4`) from the file, if an
 * `ANALYZE` left any, and has the connection forget them.
 *
 * svc's statements are prepared once and run with many bindings, and their plans are made for a
 * planner without statistics, which is what every database svc creates has. Statistics make
 * both worse (docs/operations.md, "SQLite's statistics"):
 * - the STAT4 samples (better-sqlite3 builds SQLite with them) make SQLite prepare a statement
 *   again each time a parameter the samples could judge is bound to a new value: a send's session
 *   read took 56–77 µs instead of 16 on a database of a million messages, every hot statement
 *   paying its parse and plan on every run;
 * - counts taken while a table was small stay: `sqlite_stat1` taken with one session made the
 *   session read scan the sessions and the accounts once there were more.
 * The statistics are read once, when the schema is, so this runs at open, before any statement
 * of svc's; where there are none (always, unless someone ran `ANALYZE`) it only reads.
 */
export function removePlannerStatistics(sqlite: Sqlite.Database): void {
  const tables = (
    sqlite
      .prepare(
        `select name from sqlite_schema where type = 'table' and name in ('sqlite_stat1', 'sqlite_stat4')`,
      )
      .all() as { name: string }[]
  ).map((r) => r.name);
  const filled = tables.filter(
    (name) =>
      (sqlite.prepare(`select exists (select 1 from ${name}) as x`).get() as { x: number }).x,
  );
  if (filled.length === 0) return;
  sqlite.transaction(() => {
    if (filled.includes('sqlite_stat1')) sqlite.prepare('delete from sqlite_stat1').run();
    if (filled.includes('sqlite_stat4')) sqlite.prepare('delete from sqlite_stat4').run();
  })();
  // Reloads the (now empty) statistics into the connection's schema (SQLite's ANALYZE docs).
  sqlite.exec('analyze sqlite_schema');
}
