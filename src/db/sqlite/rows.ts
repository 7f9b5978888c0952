import type Sqlite from 'better-sqlite3';

import { copiesAsLiteral, objectMaker } from '../statements/columns.js';

/** What Kysely's SQLite driver calls on a prepared statement. */
export interface DriverStatement {
  readonly reader: boolean;
  readonly readonly: boolean;
  all(parameters: ReadonlyArray<unknown>): unknown[];
  run(parameters: ReadonlyArray<unknown>): Sqlite.RunResult;
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown>;
}

/**
 * A reading statement whose rows leave SQLite as arrays and become objects here, all of one
 * shape, made by an object literal compiled for the statement's columns. better-sqlite3 builds
 * an object row through V8's C++ API, a property at a time with the column's name interned again
 * for every row (on Node 20, `Object::Set` and what it calls: a tenth of a `markRead`'s
 * instructions; bench `instructions`); an array row is filled by index, and the literal gives every
 * row the same hidden class from the start, which the code reading the rows then finds at once.
 *
 * Statements that write, and the rare column lists a literal cannot copy as they are (a name
 * given twice, `__proto__`), are left as better-sqlite3 makes them.
 */
export function objectRows(stmt: Sqlite.Statement): DriverStatement {
  if (!stmt.reader) return stmt;
  const names = stmt.columns().map((c) => c.name);
  if (!copiesAsLiteral(names)) return stmt;
  const build = objectMaker(names.map((name, i) => [name, i] as const));
  stmt.raw(true);
  return {
    reader: true,
    readonly: stmt.readonly,
    all(parameters) {
      const rows = stmt.all(parameters) as unknown[][];
      for (let i = 0; i < rows.length; i += 1) (rows as unknown[])[i] = build(rows[i]!);
      return rows;
    },
    run: (parameters) => stmt.run(parameters),
    *iterate(parameters) {
      for (const row of stmt.iterate(parameters)) yield build(row as unknown[]);
    },
  };
}
