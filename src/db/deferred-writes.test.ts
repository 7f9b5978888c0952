import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';

import { combineWrites, DEFERRED_MARKER, LazyBegin, shiftPlaceholders } from './deferred-writes.js';

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
