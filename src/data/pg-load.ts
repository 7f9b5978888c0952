import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

import type { Db } from '../db/database.js';
import { migrateTo } from '../db/migrate.js';
import { loadPg } from '../db/postgres/module.js';

import { ident, pgSchemaName, pgTableCount, pgTables } from './catalog.js';
import { Hashing } from './file-hash.js';
import { BackupError } from './manifest.js';
import type { Progress } from './progress.js';

// Loading rows into an empty PostgreSQL database, shared by `svc restore` (rows from a backup's
// COPY files) and `svc move` (rows read from SQLite): the emptiness check, the schema made by
// migrating to the source's last migration, every table's rows streamed through COPY in one
// transaction, parents first, the sequences moved past what was copied, and on any failure
// every table dropped again so the target is empty as it was.

/** One table's rows in COPY's text format, and how to check what went through. */
export interface TableLoad {
  table: string;
  /** The target columns the rows hold, in order. */
  columns: string[];
  /** The rows, one per line (opened when the table's turn comes). */
  open(): Readable;
  /**
   * Called once the rows are in (inside the transaction): `hashing` saw every byte, `rowCount`
   * is what PostgreSQL took. Throws (rolling everything back) when they are not what was meant.
   */
  check(hashing: Hashing, rowCount: number, client: pg.ClientBase): Promise<void>;
}

/**
 * Checks that `url` names an empty database, makes the schema as of `lastMigration`, runs `load`
 * and returns how to drop everything it made (for a failure after it). `doing` names the command
 * in the refusal ("restore", "move").
 */
export async function loadIntoEmptyPostgres(
  url: string,
  lastMigration: string,
  openDb: () => Db,
  doing: string,
  load: (client: pg.Client) => Promise<void>,
): Promise<() => Promise<void>> {
  const client = new (loadPg().Client)({ connectionString: url });
  await client.connect();
  try {
    const existing = await pgTableCount(client);
    if (existing > 0) {
      throw new BackupError(
        `the PostgreSQL schema "${await pgSchemaName(client)}" already holds ${existing} table(s); ${doing} needs an empty database, so nothing was written (create one with createdb, or point the URL at an empty schema)`,
      );
    }
  } catch (err) {
    await client.end();
    throw err;
  }
  const drop = () => dropAllTables(url);
  try {
    const db = openDb();
    try {
      await migrateTo(db, lastMigration);
    } finally {
      await db.close();
    }
    await load(client);
  } catch (err) {
    await drop();
    throw err;
  } finally {
    await client.end();
  }
  return drop;
}

async function dropAllTables(url: string): Promise<void> {
  const c = new (loadPg().Client)({ connectionString: url });
  await c.connect();
  try {
    const names = await c.query<{ name: string }>(
      `select c.relname as name from pg_catalog.pg_class c
         join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind in ('r', 'p')`,
    );
    for (const r of names.rows) await c.query(`drop table if exists ${ident(r.name)} cascade`);
  } finally {
    await c.end();
  }
}

/**
 * Copies every table of `loads` into the freshly migrated schema in one transaction, parents
 * first. Rows the migrations themselves insert (the direct-messages space, the search position)
 * are in the source too: they are cleared first, children first.
 */
export async function copyTablesIntoPostgres(
  client: pg.Client,
  loads: TableLoad[],
  progress: Progress,
): Promise<void> {
  const tables = await pgTables(client);
  const byTable = new Map(loads.map((l) => [l.table, l]));
  for (const l of loads) {
    if (!tables.some((t) => t.name === l.table)) {
      throw new BackupError(`the source has a table ${l.table} that the target's schema does not`);
    }
  }
  await client.query('begin');
  try {
    for (const t of [...tables].reverse()) await client.query(`delete from ${ident(t.name)}`);
    const indexes = await dropSecondaryIndexes(client);
    for (const t of tables) {
      const load = byTable.get(t.name);
      if (!load) continue;
      progress.update({ step: `table ${t.name}` });
      const columns = load.columns.map(ident).join(', ');
      const hashing = new Hashing((n) => progress.add({ bytes: n }));
      const sink = client.query(copyFrom(`copy ${ident(t.name)} (${columns}) from stdin`));
      try {
        await pipeline(load.open(), hashing, sink);
      } catch (err) {
        if (err instanceof BackupError) throw err;
        throw new BackupError(
          `copying table ${t.name} into PostgreSQL failed: ${(err as Error).message}`,
        );
      }
      await load.check(hashing, sink.rowCount, client);
      progress.add({ rows: sink.rowCount });
    }
    progress.update({ step: 'indexes' });
    await client.query(`set local maintenance_work_mem = '256MB'`);
    for (const def of indexes) await client.query(def);
    await resetSequences(client);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
}

/**
 * Drops the schema's indexes that back no constraint (in the load's transaction) and answers
 * the statements that make them again: built once over the loaded rows, as pg_restore does,
 * instead of grown row by row (the search index's GIN took most of an hour for a million rows).
 * Primary keys and unique constraints stay: the foreign keys checked during the load use them.
 */
async function dropSecondaryIndexes(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string; def: string }>(
    `select i.relname as name, pg_get_indexdef(i.oid) as def
       from pg_catalog.pg_index x
       join pg_catalog.pg_class i on i.oid = x.indexrelid
       join pg_catalog.pg_class t on t.oid = x.indrelid
       join pg_catalog.pg_namespace n on n.oid = t.relnamespace
      where n.nspname = current_schema()
        and not exists (select 1 from pg_catalog.pg_constraint k where k.conindid = x.indexrelid)
      order by i.relname`,
  );
  for (const r of rows) await client.query(`drop index ${ident(r.name)}`);
  return rows.map((r) => r.def);
}

/** Moves every serial column's sequence past the largest value copied in. */
export async function resetSequences(client: pg.ClientBase): Promise<void> {
  const serials = await client.query<{ table: string; column: string; seq: string }>(
    `select c.relname as table, a.attname as column,
            pg_get_serial_sequence(quote_ident(c.relname), a.attname) as seq
       from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = current_schema() and c.relkind = 'r'
        and pg_get_serial_sequence(quote_ident(c.relname), a.attname) is not null`,
  );
  for (const s of serials.rows) {
    await client.query(
      `select setval($1, coalesce(max(${ident(s.column)}), 1), max(${ident(s.column)}) is not null) from ${ident(s.table)}`,
      [s.seq],
    );
  }
}
