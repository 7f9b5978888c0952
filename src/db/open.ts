import path from 'node:path';

import type { Db, OpenOptions } from './database.js';
import { openPostgres } from './postgres/open.js';
import { openSqlite } from './sqlite/open.js';

/** Opens PostgreSQL when `opts.url` is set, else the SQLite file in the data directory. */
export function openDatabase(opts: OpenOptions): Db {
  if (opts.url) return openPostgres(opts.url, opts);
  return openSqlite(path.join(opts.dataDir, opts.sqliteFile ?? 'svc.sqlite'), opts);
}
