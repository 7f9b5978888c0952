import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { needsCsrf } from '../auth/csrf.js';
import { checkDocumentLimits, countMutationFields } from './document-limits.js';
import { selectOperation } from '../lib/graphql-operation.js';

// Each operation leaves a different trace in the two checks, so the pair (needs the CSRF
// header, mutation field count) names the operation each of them judged:
//   Q: a query                          -> (false, 0)
//   L: an exempt mutation (login)       -> (false, 1)
//   M: a mutation that needs the header -> (true, 2)
//   none selected                       -> (true, null)
const Q = 'query Q { me { id } }';
const L = 'mutation L { login(input: {}) { __typename } }';
const M =
  'mutation M { a: sendMessage(input: {}) { __typename } b: sendMessage(input: {}) { __typename } }';
const ANON_QUERY = '{ me { id } }';
const ANON_MUTATION =
  'mutation { a: sendMessage(input: {}) { __typename } b: sendMessage(input: {}) { __typename } }';

const trace = {
  Q: { csrf: false, count: 0 },
  L: { csrf: false, count: 1 },
  M: { csrf: true, count: 2 },
  none: { csrf: true, count: null },
} as const;

type Row = { name: string; query: string; operationName?: unknown; picks: string | null };

const rows: Row[] = [
  { name: 'one named operation, no name given', query: Q, picks: 'Q' },
  { name: 'one named operation, its name given', query: M, operationName: 'M', picks: 'M' },
  { name: 'one named operation, name null', query: L, operationName: null, picks: 'L' },
  { name: 'one named operation, another name', query: Q, operationName: 'M', picks: null },
  { name: 'anonymous query, no name', query: ANON_QUERY, picks: 'Q' },
  { name: 'anonymous mutation, no name', query: ANON_MUTATION, picks: 'M' },
  {
    name: 'anonymous operation, a name given',
    query: ANON_MUTATION,
    operationName: 'M',
    picks: null,
  },
  { name: 'several operations, no name', query: `${Q} ${L} ${M}`, picks: null },
  { name: 'several operations, name null', query: `${Q} ${M}`, operationName: null, picks: null },
  {
    name: 'several operations, the query named',
    query: `${M} ${Q}`,
    operationName: 'Q',
    picks: 'Q',
  },
  {
    name: 'several operations, the exempt one named',
    query: `${M} ${L}`,
    operationName: 'L',
    picks: 'L',
  },
  {
    name: 'several operations, the other named',
    query: `${L} ${M}`,
    operationName: 'M',
    picks: 'M',
  },
  {
    name: 'several operations, an unknown name',
    query: `${L} ${M}`,
    operationName: 'X',
    picks: null,
  },
  { name: 'a name shared by two operations', query: `${M} ${M}`, operationName: 'M', picks: null },
  { name: 'a named and an anonymous one, no name', query: `${L} ${ANON_QUERY}`, picks: null },
  { name: 'a name that is not a string', query: M, operationName: 42, picks: null },
  { name: 'a name that is an object', query: M, operationName: { M: 1 }, picks: null },
];

describe('one operation selection for the CSRF check and the document limits', () => {
  it.each(rows)('$name', ({ query, operationName, picks }) => {
    const document = parse(query);
    const selected = selectOperation(document, operationName);
    const picked =
      selected === null
        ? null
        : (selected.name?.value ?? (selected.operation === 'query' ? 'Q' : 'M'));
    expect(picked).toBe(picks);

    const expected = trace[(picks ?? 'none') as keyof typeof trace];
    const req = operationName === undefined ? { query } : { query, operationName };
    // A session cookie is present, so only the operation's own fields decide.
    expect(needsCsrf(req, true)).toBe(expected.csrf);
    // The HTTP layer hands the name on as it came; one that is not a string selects nothing.
    expect(countMutationFields(document, operationName as string | null | undefined)).toBe(
      expected.count,
    );
  });

  it('the document limits judge the operation the request selects', () => {
    const deep = `query D { ${'a { '.repeat(40)}b${' }'.repeat(40)} }`;
    const document = parse(`${deep} ${Q}`);
    expect(checkDocumentLimits(document, 'Q')).toBeNull();
    expect(checkDocumentLimits(document, 'D')).not.toBeNull();
    // No name: every operation is checked, so the document holds whichever is later selected.
    expect(checkDocumentLimits(document)).not.toBeNull();
  });
});
