import { describe, expect, it } from 'vitest';

import { objectMaker } from './columns.js';

describe('objectMaker', () => {
  it('copies each field from its key or index, in the order listed', () => {
    const fromKeys = objectMaker([
      ['id', 'a$id'],
      ['name', 'a$name'],
    ]);
    const made = fromKeys({ a$name: 'general', a$id: 'c1', other: 1 });
    expect(made).toEqual({ id: 'c1', name: 'general' });
    expect(Object.keys(made)).toEqual(['id', 'name']);
    const fromIndexes = objectMaker([
      ['it\'s "odd"', 1],
      ['n', 0],
    ]);
    expect(fromIndexes([1, 'x'])).toEqual({ 'it\'s "odd"': 'x', n: 1 });
    // A key that is not there gives undefined, as reading it would.
    expect(fromKeys({})).toEqual({ id: undefined, name: undefined });
  });

  it('refuses names a literal would not copy as they are', () => {
    expect(() => objectMaker([['__proto__', 0]])).toThrow(/__proto__/);
    expect(() =>
      objectMaker([
        ['id', 0],
        ['id', 1],
      ]),
    ).toThrow(/distinct/);
  });
});
