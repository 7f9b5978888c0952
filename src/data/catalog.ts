import type Sqlite from 'better-sqlite3';
import type pg from 'pg';

import { MIGRATION_TABLE } from '../db/migrate.js';

// What backup, restore and move copy: every table of the schema with its columns, parents before
// children (foreign keys), read from the database's own catalog so a table added by a later
// migration is copied without a change here. The migrator's own tables are not data: restore
// and move recreate them by migrating, and SQLite's FTS5 index tables are rebuilt by
// message_search's triggers (migration 0011).

export interface TableInfo {
  name: string;
  columns: string[];
}

/** Tables that are not rows to copy: the migrator's, and SQLite's internal and FTS5 ones. */
export function isCopiedTable(name: string): boolean {
  return (
    name !== MIGRATION_TABLE &&
    name !== `${MIGRATION_TABLE}_lock` &&
    !name.startsWith('sqlite_') &&
    !name.startsWith('message_search_fts')
  );
}

/**
 * Parents that PostgreSQL checks by trigger rather than by a foreign key: an index row names its
 * message (migration 0031), and the trigger that checks it reads the message, copied first.
 */
const CHECKED_BY_TRIGGER: Record<string, readonly string[]> = { message_search: ['message'] };

/** Orders `tables` so every table comes after the tables its foreign keys name. */
function parentsFirst(tables: TableInfo[], parents: Map<string, Set<string>>): TableInfo[] {
  const parentsOf = (name: string) => [
    ...(parents.get(name) ?? []),
    ...(CHECKED_BY_TRIGGER[name] ?? []),
  ];
  const byName = new Map(tables.map((t) => [t.name, t]));
  const done = new Set<string>();
  const out: TableInfo[] = [];
  const visit = (name: string, path: Set<string>) => {
    if (done.has(name) || path.has(name) || !byName.has(name)) return;
    path.add(name);
    for (const parent of parentsOf(name)) if (parent !== name) visit(parent, path);
    path.delete(name);
    done.add(name);
    out.push(byName.get(name)!);
  };
  for (const t of [...tables].sort((a, b) => a.name.localeCompare(b.name))) visit(t.name, new Set());
  return out;
}

/** The copied tables of a SQLite database, parents first. */
export function sqliteTables(db: Sqlite.Database): TableInfo[] {
  const names = (
    db
      .prepare(
        "select name from sqlite_master where type = 'table' and sql not like 'CREATE VIRTUAL%'",
      )
      .all() as { name: string }[]
  )
    .map((r) => r.name)
    .filter(isCopiedTable);
  const parents = new Map<string, Set<string>>();
  const tables = names.map((name) => {
    const columns = (db.pragma(`table_info("${name}")`) as { name: string }[]).map((c) => c.name);
    const fks = db.pragma(`foreign_key_list("${name}")`) as { table: string }[];
    parents.set(name, new Set(fks.map((f) => f.table)));
    return { name, columns };
  });
  return parentsFirst(tables, parents);
}

/** The copied tables of the current PostgreSQL schema, parents first. */
export async function pgTables(client: pg.ClientBase): Promise<TableInfo[]> {
  const cols = await client.query<{ table: string; column: string }>(
    `select c.relname as table, a.attname as column
       from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      where n.nspname = current_schema() and c.relkind in ('r', 'p')
      order by c.relname, a.attnum`,
  );
  const fks = await client.query<{ child: string; parent: string }>(
    `select c.relname as child, p.relname as parent
       from pg_catalog.pg_constraint k
       join pg_catalog.pg_class c on c.oid = k.conrelid
       join pg_catalog.pg_class p on p.oid = k.confrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where k.contype = 'f' and n.nspname = current_schema()`,
  );
  const byName = new Map<string, TableInfo>();
  for (const r of cols.rows) {
    if (!isCopiedTable(r.table)) continue;
    let t = byName.get(r.table);
    if (!t) byName.set(r.table, (t = { name: r.table, columns: [] }));
    t.columns.push(r.column);
  }
  const parents = new Map<string, Set<string>>();
  for (const r of fks.rows) {
    let set = parents.get(r.child);
    if (!set) parents.set(r.child, (set = new Set()));
    set.add(r.parent);
  }
  return parentsFirst([...byName.values()], parents);
}

/** How many tables (of any kind) the current PostgreSQL schema holds. */
export async function pgTableCount(client: pg.ClientBase): Promise<number> {
  const res = await client.query<{ n: string }>(
    `select count(*) as n from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm')`,
  );
  return Number(res.rows[0]!.n);
}

/** The current schema's name (what a message about the target names). */
export async function pgSchemaName(client: pg.ClientBase): Promise<string> {
  const res = await client.query<{ s: string }>('select current_schema() as s');
  return res.rows[0]!.s;
}

/** Quotes an identifier for either dialect (both take double quotes). */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
