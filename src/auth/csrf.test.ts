import { describe, expect, it } from 'vitest';

import { batchNeedsCsrf, needsCsrf, type CsrfRequest } from './csrf.js';

const EXEMPT = [
  'login',
  'logout',
  'signupWithInvite',
  'requestPasswordReset',
  'resetPassword',
  'keyLoginChallenge',
  'loginWithKey',
  'signupWithKey',
  'sendDeviceLinkOffer',
  'applyRemoteRevocation',
];

/** Fragments F1 ... F`depth`, each spreading the next; the last selects `leaf`. */
function chainFragments(depth: number, leaf: string): string {
  const parts: string[] = [];
  for (let i = 1; i < depth; i += 1) parts.push(`fragment F${i} on Mutation { ...F${i + 1} }`);
  parts.push(`fragment F${depth} on Mutation { ${leaf} }`);
  return parts.join('\n');
}

/** An operation of `kind` spreading a chain of `depth` nested fragments. */
function fragmentChain(depth: number, leaf: string, kind = 'mutation'): string {
  return `${kind} { ...F1 }\n${chainFragments(depth, leaf)}`;
}

/** Fragments each spreading the next twice: 2^levels expansions if expanded naively. */
function fragmentBomb(levels: number, leaf: string): string {
  const parts = ['mutation { ...B0 }'];
  for (let i = 0; i < levels; i += 1) {
    parts.push(`fragment B${i} on Mutation { ...B${i + 1} ...B${i + 1} }`);
  }
  parts.push(`fragment B${levels} on Mutation { ${leaf} }`);
  return parts.join('\n');
}

type Row = {
  name: string;
  query: unknown;
  operationName?: unknown;
  // Omitted: the answer must be the same with and without a session cookie.
  cookie?: boolean;
  needs: boolean;
};

const rows: Row[] = [
  // Rule 7: each exempt mutation, alone.
  ...EXEMPT.map((field) => ({
    name: `exempt: ${field}`,
    query: `mutation { ${field}(input: { a: 1 }) { __typename } }`,
    needs: false,
  })),
  {
    name: 'exempt: login with variables and a payload selection',
    query:
      'mutation Login($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken user { id } } }',
    needs: false,
  },
  // Rule 7: the two exempt only without a session cookie.
  {
    name: 'rotateIdentityKey without cookie',
    query: 'mutation { rotateIdentityKey }',
    cookie: false,
    needs: false,
  },
  {
    name: 'rotateIdentityKey with cookie',
    query: 'mutation { rotateIdentityKey }',
    cookie: true,
    needs: true,
  },
  {
    name: 'cancelDeviceLink without cookie',
    query: 'mutation { cancelDeviceLink(id: "x") }',
    cookie: false,
    needs: false,
  },
  {
    name: 'cancelDeviceLink with cookie',
    query: 'mutation { cancelDeviceLink(id: "x") }',
    cookie: true,
    needs: true,
  },
  {
    name: 'cancelDeviceLink beside login with cookie',
    query: 'mutation { login cancelDeviceLink }',
    cookie: true,
    needs: true,
  },
  {
    name: 'cancelDeviceLink beside login without cookie',
    query: 'mutation { login cancelDeviceLink }',
    cookie: false,
    needs: false,
  },
  // Rules 4 and 8: any non-exempt root field.
  { name: 'plain mutation', query: 'mutation { sendMessage(input: {}) { id } }', needs: true },
  {
    name: 'exempt beside non-exempt',
    query: 'mutation { login logout deleteAccount }',
    needs: true,
  },
  {
    name: 'several exempt fields',
    query: 'mutation { login logout keyLoginChallenge }',
    needs: false,
  },
  {
    name: 'aliases of exempt fields',
    query: 'mutation { a: login b: login c: logout }',
    needs: false,
  },
  {
    name: 'alias named like an exempt field',
    query: 'mutation { login: sendMessage }',
    needs: true,
  },
  {
    name: 'only the root counts, not fields below it',
    query: 'mutation { login { sendMessage deleteAccount } }',
    needs: false,
  },
  // Rule 8: fragments.
  {
    name: 'named fragment, exempt',
    query: 'mutation { ...F } fragment F on Mutation { login }',
    needs: false,
  },
  {
    name: 'named fragment, non-exempt',
    query: 'mutation { login ...F } fragment F on Mutation { sendMessage }',
    needs: true,
  },
  {
    name: 'inline fragment, non-exempt',
    query: 'mutation { login ... on Mutation { sendMessage } }',
    needs: true,
  },
  {
    name: 'inline fragment without type condition, exempt',
    query: 'mutation { ... { logout } }',
    needs: false,
  },
  {
    name: 'inline fragments nested, non-exempt at the bottom',
    query: 'mutation { ... { ... on Mutation { ... { deleteAccount } } } login }',
    needs: true,
  },
  {
    name: 'named inside inline inside named',
    query: `mutation { ...A }
      fragment A on Mutation { login ... on Mutation { ...B } }
      fragment B on Mutation { logout ...C }
      fragment C on Mutation { ... { deleteAccount } }`,
    needs: true,
  },
  {
    name: 'a fragment under a root field is not a root field',
    query: 'mutation { login { user { ...U } } } fragment U on User { id deleteAccount }',
    needs: false,
  },
  { name: 'fragment chain 5 deep, exempt', query: fragmentChain(5, 'login'), needs: false },
  {
    name: 'fragment chain 5 deep, non-exempt',
    query: fragmentChain(5, 'sendMessage'),
    needs: true,
  },
  { name: 'fragment chain 32 deep', query: fragmentChain(32, 'login'), needs: false },
  { name: 'fragment chain 33 deep', query: fragmentChain(33, 'login'), needs: true },
  {
    name: 'chain of 32 met again one level lower',
    // F1 is finished when G spreads it, so only the height remembered for F1 shows that the
    // path through G nests 33 deep.
    query: `mutation { ...F1 ...G } fragment G on Mutation { ...F1 }\n${chainFragments(32, 'login')}`,
    needs: true,
  },
  {
    name: 'the same fragment spread twice',
    query: 'mutation { ...F ...F } fragment F on Mutation { login }',
    needs: false,
  },
  {
    name: 'diamond: two fragments spreading a third',
    query: `mutation { ...A ...B }
      fragment A on Mutation { ...C } fragment B on Mutation { ...C } fragment C on Mutation { login }`,
    needs: false,
  },
  { name: 'fragment bomb, 30 levels, exempt', query: fragmentBomb(30, 'login'), needs: false },
  {
    name: 'fragment bomb, 30 levels, non-exempt',
    query: fragmentBomb(30, 'sendMessage'),
    needs: true,
  },
  // Rule 5: what cannot be classified completely.
  {
    name: 'fragments spreading each other',
    query:
      'mutation { ...A } fragment A on Mutation { login ...B } fragment B on Mutation { ...A }',
    needs: true,
  },
  {
    name: 'fragment spreading itself',
    query: 'mutation { ...A } fragment A on Mutation { login ...A }',
    needs: true,
  },
  {
    name: 'cycle entered through an inline fragment',
    query: 'mutation { ...A } fragment A on Mutation { ... on Mutation { ...A } }',
    needs: true,
  },
  {
    name: 'undefined fragment',
    query: 'mutation { login ...Missing }',
    needs: true,
  },
  {
    name: 'fragment defined twice',
    query: 'mutation { ...F } fragment F on Mutation { login } fragment F on Mutation { login }',
    needs: true,
  },
  { name: 'unparsable', query: 'mutation { login', needs: true },
  { name: 'empty query', query: '', needs: true },
  { name: 'only a fragment, no operation', query: 'fragment F on Mutation { login }', needs: true },
  { name: 'query is null', query: null, needs: true },
  { name: 'query is missing', query: undefined, needs: true },
  { name: 'query is a number', query: 42, needs: true },
  { name: 'query is an object', query: { kind: 'Document', definitions: [] }, needs: true },
  {
    name: 'more than 10,000 tokens',
    query: `mutation {${' login'.repeat(10_000)} }`,
    needs: true,
  },
  {
    name: 'just under 10,000 tokens',
    query: `mutation {${' login'.repeat(9_996)} }`,
    needs: false,
  },
  {
    name: 'nested 5,000 deep',
    query: `mutation { login${'{ a '.repeat(5_000)}${'}'.repeat(5_000)} }`,
    needs: true,
  },
  // Operation selection.
  {
    name: 'operationName selects the exempt one',
    query: 'mutation A { sendMessage } mutation B { login }',
    operationName: 'B',
    needs: false,
  },
  {
    name: 'operationName selects the non-exempt one',
    query: 'mutation A { sendMessage } mutation B { login }',
    operationName: 'A',
    needs: true,
  },
  {
    name: 'unknown operationName',
    query: 'mutation B { login }',
    operationName: 'C',
    needs: true,
  },
  {
    name: 'operationName given for an anonymous operation',
    query: 'mutation { login }',
    operationName: 'B',
    needs: true,
  },
  {
    name: 'several operations and no operationName',
    query: 'mutation A { login } mutation B { logout }',
    needs: true,
  },
  {
    name: 'several operations and operationName null',
    query: 'query A { me } query B { me }',
    operationName: null,
    needs: true,
  },
  {
    name: 'one operation and operationName null',
    query: 'mutation A { login }',
    operationName: null,
    needs: false,
  },
  {
    name: 'operationName that is not a string',
    query: 'mutation A { login }',
    operationName: 42,
    needs: true,
  },
  {
    name: 'operation name shared by two operations',
    query: 'mutation A { login } mutation A { sendMessage }',
    operationName: 'A',
    needs: true,
  },
  {
    name: 'a query selected beside a mutation',
    query: 'query Q { me } mutation M { sendMessage }',
    operationName: 'Q',
    needs: false,
  },
  // Rule 6: queries and subscriptions never need it, whatever they hold.
  { name: 'query shorthand', query: '{ me { id } }', needs: false },
  { name: 'query shorthand with a mutation-like field', query: '{ sendMessage }', needs: false },
  { name: 'subscription', query: 'subscription { messageAdded { id } }', needs: false },
  { name: 'query with an undefined fragment', query: 'query { ...Missing }', needs: false },
  {
    name: 'query with a fragment cycle',
    query: 'query { ...A } fragment A on Query { ...A }',
    needs: false,
  },
  {
    name: 'query with a fragment chain 40 deep',
    query: fragmentChain(40, 'me', 'query'),
    needs: false,
  },
  // Rule 8: directives change nothing.
  {
    name: '@skip(if: true) on a non-exempt field',
    query: 'mutation { login sendMessage @skip(if: true) }',
    needs: true,
  },
  {
    name: '@include(if: false) on an inline fragment',
    query: 'mutation { login ... @include(if: false) { deleteAccount } }',
    needs: true,
  },
  {
    name: '@skip with a variable on a fragment spread',
    query:
      'mutation ($s: Boolean!) { login ...F @skip(if: $s) } fragment F on Mutation { sendMessage }',
    needs: true,
  },
  {
    name: '@skip on an exempt field',
    query: 'mutation { login @skip(if: true) logout }',
    needs: false,
  },
  // `__typename` is neutral: it neither needs the token nor spoils an exemption.
  { name: '__typename beside exempt fields', query: 'mutation { login __typename }', needs: false },
  { name: '__typename alone', query: 'mutation { __typename }', needs: false },
  {
    name: '__typename through a fragment',
    query: 'mutation { ...F } fragment F on Mutation { t: __typename logout }',
    needs: false,
  },
  {
    name: '__typename does not hide a non-exempt field',
    query: 'mutation { __typename sendMessage }',
    needs: true,
  },
  {
    name: 'other meta-fields are not exempt',
    query: 'mutation { __schema { types { name } } }',
    needs: true,
  },
];

describe('needsCsrf', () => {
  it('has a table that covers the rules', () => {
    expect(rows.length).toBeGreaterThanOrEqual(45);
  });

  it.each(rows)('$name', ({ query, operationName, cookie, needs }) => {
    const req: CsrfRequest = operationName === undefined ? { query } : { query, operationName };
    const cookies = cookie === undefined ? [false, true] : [cookie];
    for (const hasCookie of cookies) {
      expect(needsCsrf(req, hasCookie), `session cookie: ${hasCookie}`).toBe(needs);
    }
  });

  it('treats a batch entry that is not an object as needing it', () => {
    expect(needsCsrf(null as unknown as CsrfRequest, false)).toBe(true);
    expect(needsCsrf('mutation { login }' as unknown as CsrfRequest, false)).toBe(true);
  });

  it('does not throw on a document that overflows the parser stack within the token limit', () => {
    // Whether 3,000 levels overflow depends on the stack left; either way nothing escapes.
    const query = `mutation { login${'{ a '.repeat(3_000)}${'}'.repeat(3_000)} }`;
    expect(() => needsCsrf({ query }, true)).not.toThrow();
  });

  it('classifies an abusive document quickly', () => {
    const started = performance.now();
    expect(needsCsrf({ query: fragmentBomb(2_000, 'login') }, true)).toBe(true);
    expect(
      needsCsrf(
        { query: `mutation {${' ...F'.repeat(4_000)} } fragment F on Mutation { login }` },
        true,
      ),
    ).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('batchNeedsCsrf', () => {
  const login = { query: 'mutation { login }' };
  const logout = { query: 'mutation { logout }' };
  const send = { query: 'mutation { sendMessage }' };
  const me = { query: '{ me { id } }' };

  it.each([
    { name: 'all exempt', batch: [login, logout], needs: false },
    { name: 'one non-exempt among exempt', batch: [login, send, logout], needs: true },
    { name: 'queries only', batch: [me, me], needs: false },
    { name: 'a query and a mutation', batch: [me, send], needs: true },
    { name: 'one unparsable', batch: [me, { query: '{' }], needs: true },
    { name: 'one without a query', batch: [login, {} as CsrfRequest], needs: true },
    { name: 'empty', batch: [], needs: false },
  ])('$name', ({ batch, needs }) => {
    expect(batchNeedsCsrf(batch, true)).toBe(needs);
  });

  it('applies the session-cookie rule to every entry', () => {
    const rotate = { query: 'mutation { rotateIdentityKey }' };
    expect(batchNeedsCsrf([login, rotate], false)).toBe(false);
    expect(batchNeedsCsrf([login, rotate], true)).toBe(true);
  });
});
