import type pg from 'pg';

import { copiesAsLiteral, objectMaker } from './columns.js';

type Make = (row: unknown[]) => Record<string, unknown>;

/**
 * Rows of the named statements (the hot ones: prepared.ts) are asked of node-postgres as arrays
 * and made objects here by a literal compiled per statement, as SQLite's are (sqlite-rows.ts).
 * node-postgres makes each object row by copying an empty template and storing each column by
 * its name, a keyed store the engine cannot specialize across statements (bench `instructions`:
 * its copy and stores are among the largest costs of a `me` on PostgreSQL). A named statement
 * never selects `*`, so its columns are fixed; a list a literal cannot copy as it is (a name
 * twice, `__proto__`) is copied a column at a time, as node-postgres would.
 */
export class PgRows {
  private readonly makers = new Map<string, Make>();

  /** `result` with its array rows made objects; `name` is the statement's. */
  objects<R extends pg.QueryResult>(name: string, result: R): R {
    if (result.rows.length === 0) return result;
    let make = this.makers.get(name);
    if (!make) {
      make = maker(result.fields.map((f) => f.name));
      this.makers.set(name, make);
    }
    const rows = result.rows as unknown[];
    for (let i = 0; i < rows.length; i += 1) rows[i] = make(rows[i] as unknown[]);
    return result;
  }
}

function maker(names: string[]): Make {
  if (copiesAsLiteral(names)) {
    return objectMaker(names.map((name, i) => [name, i] as const));
  }
  return (row) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i += 1) out[names[i]!] = row[i];
    return out;
  };
}
