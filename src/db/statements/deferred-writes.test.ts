import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';

import {
  alone,
  combineWrites,
  DEFERRED_MARKER,
  LazyBegin,
  shiftPlaceholders,
} from './deferred-writes.js';
import { composedStatement, namedStatements } from './prepared.js';

describe('combineWrites', () => {
  it('sends one write as it is', () => {
    const [only, ...rest] = combineWrites([
      CompiledQuery.raw('insert into "t" ("a") values ($1)', [1]),
    ]);
    expect(rest).toEqual([]);
    expect(only!.sql).toBe('insert into "t" ("a") values ($1)');
    expect(only!.parameters).toEqual([1]);
  });

  it('joins writes into one WITH statement, renumbering their placeholders in order', () => {
    const [only, ...rest] = combineWrites([
      CompiledQuery.raw('insert into "t" ("a", "b") values ($1, $2)', ['x', 'y']),
      CompiledQuery.raw('update "u" set "n" = $1 where "id" = $2 and "n" < $1', [5, 'k']),
    ]);
    expect(rest).toEqual([]);
    expect(only!.sql).toBe(
      'with w0 as (insert into "t" ("a", "b") values ($1, $2)), ' +
        'w1 as (update "u" set "n" = $3 where "id" = $4 and "n" < $3) select 1',
    );
    expect(only!.parameters).toEqual(['x', 'y', 5, 'k']);
  });

  it('splits into several statements before the parameter limit', () => {
    const big = CompiledQuery.raw(
      'insert into "t" values ' + Array.from({ length: 20_000 }, (_, i) => `($${i + 1})`).join(','),
      Array.from({ length: 20_000 }, (_, i) => i),
    );
    const statements = combineWrites([big, big]);
    expect(statements).toHaveLength(2);
    expect(statements[1]!.sql.endsWith('($20000)')).toBe(true);
  });
});

describe('composedStatement', () => {
  const named = (sql: string) => {
    namedStatements.set(sql, `svc_test_${namedStatements.size}`);
    return sql;
  };

  it('keeps the text composed from named parts, and composes it again for other parts', () => {
    const a = named('insert into "t" ("a") values ($1) /* kept a */');
    const b = named('update "u" set "n" = $1 /* kept b */');
    let composed = 0;
    const compose = () => {
      composed += 1;
      return `with w0 as (${a}), w1 as (${b}) select 1`;
    };
    const first = composedStatement('test', [a, b], compose);
    const second = composedStatement('test', [a, b], compose);
    expect(second).toBe(first);
    expect(composed).toBe(1);
    expect(namedStatements.has(first)).toBe(true);
    // Another kind, or the parts in another order, is another statement.
    composedStatement('other', [a, b], () => 'select 2 /* other kind */');
    composedStatement('test', [b, a], () => 'select 3 /* other order */');
    expect(composed).toBe(1);
    expect(composedStatement('other', [a, b], () => 'not called')).toBe(
      'select 2 /* other kind */',
    );
  });

  it('composes anew every time, and names nothing, when a part is not named', () => {
    const a = named('insert into "t" ("a") values ($1) /* named */');
    const loose = 'insert into "t" ("a") values ($1), ($2) /* not named */';
    let composed = 0;
    const compose = () => {
      composed += 1;
      return `with w0 as (${a}), w1 as (${loose}) select 1 /* loose */`;
    };
    const text = composedStatement('test', [a, loose], compose);
    composedStatement('test', [a, loose], compose);
    expect(composed).toBe(2);
    expect(namedStatements.has(text)).toBe(false);
  });

  it('gives the same text and renumbered parameters for a shape met again', () => {
    const a = named('insert into "t" ("a", "b") values ($1, $2) /* again a */');
    const b = named('update "u" set "n" = $1 where "id" = $2 /* again b */');
    const first = combineWrites([CompiledQuery.raw(a, [1, 2]), CompiledQuery.raw(b, [3, 4])]);
    const second = combineWrites([CompiledQuery.raw(a, [5, 6]), CompiledQuery.raw(b, [7, 8])]);
    expect(second[0]!.sql).toBe(first[0]!.sql);
    expect(second[0]!.sql).toContain('"n" = $3 where "id" = $4');
    expect(second[0]!.parameters).toEqual([5, 6, 7, 8]);
    const marked = alone(second[0]!);
    expect(marked.sql).toBe(`${DEFERRED_MARKER}${second[0]!.sql}`);
    expect(alone(first[0]!).sql).toBe(marked.sql);
    expect(namedStatements.has(marked.sql)).toBe(true);
    expect(marked.parameters).toEqual([5, 6, 7, 8]);
  });
});

describe('shiftPlaceholders', () => {
  it('leaves quoted text alone', () => {
    expect(shiftPlaceholders(`select '$1', "$2", 'it''s $3', $1`, 10)).toBe(
      `select '$1', "$2", 'it''s $3', $11`,
    );
  });
});

describe('LazyBegin', () => {
  it('sends a transaction of deferred writes as one statement, without begin and commit', () => {
    const lazy = new LazyBegin();
    expect(lazy.route('begin').action).toBe('skip');
    expect(lazy.route(`${DEFERRED_MARKER}insert into t values ($1)`)).toEqual({
      action: 'send',
      beginFirst: false,
    });
    expect(lazy.route('commit').action).toBe('skip');
  });

  it('sends begin just before the first other statement, then everything as usual', () => {
    const lazy = new LazyBegin();
    lazy.route('begin');
    expect(lazy.route('select 1')).toEqual({ action: 'send', beginFirst: true });
    expect(lazy.route(`${DEFERRED_MARKER}insert into t values ($1)`)).toEqual({
      action: 'send',
      beginFirst: false,
    });
    expect(lazy.route('commit')).toEqual({ action: 'send', beginFirst: false });
  });

  it('sends nothing for a transaction that made no statement', () => {
    const lazy = new LazyBegin();
    lazy.route('begin');
    expect(lazy.route('rollback').action).toBe('skip');
    expect(lazy.route('select 1')).toEqual({ action: 'send', beginFirst: false });
  });

  it('refuses a statement after the one that held every write', () => {
    const lazy = new LazyBegin();
    lazy.route('begin');
    lazy.route(`${DEFERRED_MARKER}insert into t values ($1)`);
    expect(() => lazy.route('select 1')).toThrow(/after the one that held every write/);
  });
});
