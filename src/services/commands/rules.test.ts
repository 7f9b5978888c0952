import { describe, expect, it } from 'vitest';

import { AppError } from '../../errors.js';

import { canonicalJson, parseLine, redactArgs } from './args.js';
import { parseDuration } from './builtins.js';
import { normalizeChord } from './keybinds.js';
import { compilePattern, matchPattern } from './pattern.js';
import type { ArgDef } from './types.js';

const arg = (name: string, type: ArgDef['type']): ArgDef => ({
  name,
  type,
  description: name,
  required: true,
});

describe('normalizeChord', () => {
  it.each([
    ['mod+k', 'Mod+K'],
    ['Shift+Mod+k', 'Mod+Shift+K'],
    ['meta+alt+ctrl+ArrowUp', 'Ctrl+Alt+Meta+ArrowUp'],
    ['f5', 'F5'],
    ['Alt+slash', 'Alt+Slash'],
    ['Shift+Enter', 'Shift+Enter'],
  ])('%s is stored %s', (input, out) => expect(normalizeChord(input)).toBe(out));

  it.each(['k', 'Shift+K', 'Hyper+K', 'Mod+Mod+K', 'Mod+F13', 'Mod+', '', 'Mod+Banana', 7])(
    '%s is refused',
    (input) => expect(() => normalizeChord(input)).toThrow(AppError),
  );
});

describe('parseDuration', () => {
  it.each([
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['1 day', 86_400_000],
    ['3w', 3 * 7 * 86_400_000],
    ['90 minutes', 5_400_000],
    ['soon', null],
    ['-1h', null],
    ['1.5h', null],
  ])('%s is %s ms', (input, ms) => expect(parseDuration(input)).toBe(ms));
});

describe('parseLine', () => {
  const remind = [arg('in', 'duration'), arg('text', 'text')];
  it.each([
    ['10m water the plants', { in: '10m', text: 'water the plants' }],
    ['  2h   stretch  ', { in: '2h', text: 'stretch' }],
    ['"1 day" call Sam', { in: '1 day', text: 'call Sam' }],
    ['10m', { in: '10m' }],
    ['', {}],
  ])('%j', (line, out) => expect(parseLine(remind, line)).toEqual(out));

  it('refuses words past the last argument', () => {
    expect(() => parseLine([arg('message', 'message')], 'a b')).toThrow(/too many words/);
    expect(() => parseLine([], 'x')).toThrow(/no arguments/);
  });
});

describe('redactArgs and canonicalJson', () => {
  it('redacts secret-typed and secret-looking arguments', () => {
    expect(
      redactArgs([arg('pin', 'secret'), arg('user', 'user')], {
        pin: '1234',
        user: 'u',
        apiToken: 't',
        password: 'p',
        empty: null,
      }),
    ).toEqual({
      pin: '[redacted]',
      user: 'u',
      apiToken: '[redacted]',
      password: '[redacted]',
      empty: null,
    });
  });

  it('is independent of key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
  });
});

describe('the pipeline pattern', () => {
  it.each([
    ['deploy', 'Please DEPLOY now', true],
    ['deploy * prod', 'deploy v2 to prod', true],
    ['deploy * prod', 'prod deploy', false],
    ['v?.0', 'release v2.0', true],
    ['v?.0', 'release v.0', false],
    ['a\\*b', 'a*b', true],
    ['a\\?b', 'axb', false],
    ['ünï*ode', 'ÜNÏCODE', true],
  ])('%s on %j is %s', (pattern, text, matches) =>
    expect(matchPattern(compilePattern(pattern), text)).toBe(matches),
  );

  it.each([
    ['(a+)+$', 'a'.repeat(5000) + '!'],
    ['*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(5000)],
    ['?'.repeat(100) + 'b', 'a'.repeat(5000)],
  ])('%s takes at most (n+1)×(m+1) steps', (pattern, text) => {
    const p = compilePattern(pattern);
    const meter = { steps: 0 };
    matchPattern(p, text, meter);
    expect(meter.steps).toBeLessThanOrEqual(([...text].length + 1) * (p.tokens.length + 1));
  });

  it.each(['', '   ', 'x'.repeat(201), 42])('refuses %j', (input) =>
    expect(() => compilePattern(input)).toThrow(AppError),
  );
});
