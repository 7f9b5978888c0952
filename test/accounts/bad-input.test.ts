import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  checkPassword,
  lookupKey,
  normalizeEmail,
  normalizeUsername,
} from '../../src/services/accounts/username.js';
import { normalizeDisplayName } from '../../src/services/accounts/profile.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { signIn } from '../_util/seed.js';

import { PASSWORD, SIGNUP, expectCode, ok } from './_helpers.js';

// Each row: input, and the stored username (a string) or the refusal (a pattern of its message).
const USERNAMES: Array<[unknown, string | RegExp]> = [
  ['alice', 'alice'],
  ['Alice_99', 'Alice_99'],
  ['a.b-c_d', 'a.b-c_d'],
  ['  padded  ', 'padded'],
  ['\talice\n', 'alice'],
  // NFKC folds compatibility forms into plain letters...
  ['ａｌｉｃｅ', 'alice'],
  ['ℌello', 'Hello'],
  ['ﬁsh', 'fish'],
  ['x²', 'x2'],
  // ...and everything else outside ASCII letters and digits is refused.
  ['аlice', /only letters/], // Cyrillic а
  ['alıce', /only letters/], // dotless i
  ['ali\u200bce', /only letters/], // zero-width space
  ['ali\u202ece', /only letters/], // right-to-left override
  ['al\u0000ice', /only letters/],
  ['al\u0007ice', /only letters/],
  ['alice\u0301', /only letters/], // combining accent
  ['élan', /only letters/],
  ['名前', /2 to 32|only letters/],
  ['user name', /only letters/],
  ['user@host', /only letters/],
  ['_alice', /only letters/],
  ['alice.', /only letters/],
  ['a..b', /in a row/],
  ['a_-b', /in a row/],
  ['a', /2 to 32/],
  ['', /2 to 32/],
  ['x'.repeat(33), /2 to 32/],
  ['x'.repeat(10_000), /2 to 32/],
  ['ﬃ'.repeat(200), /2 to 32/],
  ['admin', /reserved/],
  ['Admin', /reserved/],
  ['here', /reserved/],
  ['everyone', /reserved/],
  ['deleted-0192ab', /reserved/],
  ['DELETED-x', /reserved/],
  [42, /must be a string/],
  [null, /must be a string/],
];

describe('username rules', () => {
  it.each(USERNAMES)('%j -> %s', (input, expected) => {
    if (typeof expected === 'string') {
      expect(normalizeUsername(input)).toEqual({
        username: expected,
        key: expected.toLowerCase(),
      });
    } else {
      let error: unknown;
      try {
        normalizeUsername(input);
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ code: 'VALIDATION', message: expect.stringMatching(expected) });
    }
  });

  it('looks names up by the same key', () => {
    expect(lookupKey(' ＡＬＩＣＥ ')).toBe('alice');
    expect(lookupKey('x'.repeat(10_000))).toHaveLength(256);
  });
});

describe('password, email and display name rules', () => {
  it.each<[unknown, boolean]>([
    ['40718263', true],
    ['1234567', false],
    // On the list of the most common passwords, whatever the case or width.
    ['12345678', false],
    ['Password1', false],
    ['ＱＷＥＲＴＹ１２３', false],
    [' iloveyou ', false],
    ['😀😀😀😀😀😀😀😀', true], // 8 characters, 32 bytes
    ['😀😀😀😀😀😀😀', false],
    ['x'.repeat(1024), true],
    ['x'.repeat(1025), false],
    ['é'.repeat(513), false], // 1026 bytes
    [12345678, false],
  ])('password %j accepted: %s', (input, accepted) => {
    if (accepted) expect(checkPassword(input)).toBe(input);
    else
      expect(() => checkPassword(input)).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
  });

  it.each<[unknown, string | null | false]>([
    ['a@example.org', 'a@example.org'],
    [' A@Example.org ', 'A@Example.org'],
    ['', null],
    [null, null],
    ['a@b', false],
    ['a b@example.org', false],
    [`${'x'.repeat(250)}@example.org`, false],
  ])('email %j -> %s', (input, expected) => {
    if (expected === false) {
      expect(() => normalizeEmail(input)).toThrow(expect.objectContaining({ code: 'VALIDATION' }));
    } else {
      expect(normalizeEmail(input)?.email ?? null).toBe(expected);
    }
  });

  it.each<[unknown, string | null | false]>([
    ['Ada Lovelace', 'Ada Lovelace'],
    ['  Ada  ', 'Ada'],
    ['', null],
    [null, null],
    ['Zoë 🚀', 'Zoë 🚀'],
    ['x'.repeat(64), 'x'.repeat(64)],
    ['x'.repeat(65), false],
    ['Ada\u0000', false],
    ['Ada\nLovelace', false],
    ['Ada\u202eecalevol', false],
    ['A\u200bda', false],
    ['Ada\u00a0L', false],
  ])('display name %j -> %s', (input, expected) => {
    if (expected === false) {
      expect(() => normalizeDisplayName(input)).toThrow(
        expect.objectContaining({ code: 'VALIDATION' }),
      );
    } else {
      expect(normalizeDisplayName(input)).toBe(expected);
    }
  });
});

describe('bad input over the API answers a clear code, never INTERNAL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      env: { SVC_SIGNUP_REQUIRE_KEYS: 'false', SVC_OPEN_REGISTRATION: 'true' },
    });
  });
  afterAll(async () => t?.close());

  it('refuses bad signups with VALIDATION and folded duplicates with CONFLICT', async () => {
    ok(await t.gql(SIGNUP, { input: { username: 'alice', password: PASSWORD } }));
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ username: 'x'.repeat(100_000), password: PASSWORD }, 'VALIDATION'],
      [{ username: 'bob\u0000', password: PASSWORD }, 'VALIDATION'],
      [{ username: 'bоb', password: PASSWORD }, 'VALIDATION'], // Cyrillic о
      [{ username: 'deleted-1234', password: PASSWORD }, 'VALIDATION'],
      [{ username: 'bob', password: 'short' }, 'VALIDATION'],
      [{ username: 'bob', password: 'x'.repeat(5000) }, 'VALIDATION'],
      [{ username: 'bob', password: PASSWORD, email: 'not-an-address' }, 'VALIDATION'],
      [{ username: 'bob', password: PASSWORD, displayName: 'bad\u202e' }, 'VALIDATION'],
      [{ username: 'ＡＬＩＣＥ', password: PASSWORD }, 'CONFLICT'],
      [{ username: 'Alice', password: PASSWORD }, 'CONFLICT'],
      [{ username: 'bob', password: PASSWORD, inviteToken: 'x'.repeat(5000) }, 'INVALID_TOKEN'],
    ];
    for (const [input, code] of cases) {
      expectCode(await t.gql(SIGNUP, { input }), code);
    }
  });

  it('signs in with the password in another Unicode form (NFKC)', async () => {
    const composed = 'caf\u00e9-au-lait';
    const decomposed = 'cafe\u0301-au-lait';
    ok(await t.gql(SIGNUP, { input: { username: 'barista', password: composed } }));
    await expect(signIn(t, 'barista', decomposed)).resolves.toBeDefined();
  });
});
