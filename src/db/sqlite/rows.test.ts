import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { objectRows } from './rows.js';

describe('objectRows', () => {
  let dir: string;
  let db: Sqlite.Database;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-rows-'));
    db = new Sqlite(path.join(dir, 'rows.sqlite'));
    db.exec(`create table t (id text primary key, n integer, x real, body blob, note text);
      insert into t values ('a', 1, 1.5, x'00ff', null), ('b', 2, -0.25, null, 'it''s "quoted"');`);
  });
  afterAll(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // Each statement's rows as better-sqlite3 gives them, and through objectRows.
  const both = (sql: string, params: unknown[] = []) => ({
    plain: db.prepare(sql).all(params),
    fast: objectRows(db.prepare(sql)).all(params),
  });

  it('gives the rows better-sqlite3 gives, every type, in column order', () => {
    for (const sql of [
      'select * from t order by id',
      'select id, n + 1 as "next value", note as "a.b" from t where n > ? order by id',
      'select count(*) as n from t',
      'select * from t where id = ?',
    ]) {
      const { plain, fast } = both(sql, sql.includes('?') ? [sql.includes('n >') ? 0 : 'zz'] : []);
      expect(fast, sql).toEqual(plain);
      fast.forEach((row, i) =>
        expect(Object.keys(row as object)).toEqual(Object.keys(plain[i] as object)),
      );
    }
  });

  it('streams the same rows, and stops reading when the reader stops', () => {
    const stmt = objectRows(db.prepare('select id, n from t order by id'));
    expect([...stmt.iterate([])]).toEqual([
      { id: 'a', n: 1 },
      { id: 'b', n: 2 },
    ]);
    for (const row of stmt.iterate([])) {
      expect(row).toEqual({ id: 'a', n: 1 });
      break;
    }
    // The statement is free again (better-sqlite3 refuses a statement still iterating).
    expect(stmt.all([])).toHaveLength(2);
  });

  it('leaves writes and column lists an object literal cannot copy to better-sqlite3', () => {
    const write = db.prepare("insert into t (id, n) values ('c', 3)");
    expect(objectRows(write)).toBe(write);
    const twice = db.prepare('select id, n as id from t order by n');
    expect(objectRows(twice)).toBe(twice);
    expect(twice.all()).toEqual([{ id: 1 }, { id: 2 }]);
    const proto = db.prepare('select id as __proto__ from t');
    expect(objectRows(proto)).toBe(proto);
  });

  it('reads what a write returns', () => {
    const stmt = objectRows(db.prepare("insert into t (id, n) values ('d', 4) returning id, n"));
    expect(stmt.reader).toBe(true);
    expect(stmt.all([])).toEqual([{ id: 'd', n: 4 }]);
    expect(stmt.readonly).toBe(false);
  });
});
