import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DOCUMENT_LIMITS } from '../../src/graphql/document-limits.js';
import { createTestApp, type TestApp } from '../_util/app.js';

type Expect =
  | { status: 400 | 404 | 413; error: RegExp }
  | { status: 200; graphqlError: RegExp }
  | { status: 200; data: unknown };

describe('bad input on POST /api', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  const send = (
    payload: string | Buffer,
    contentType = 'application/json',
    method: 'POST' | 'PUT' = 'POST',
  ) => t.inject({ method, url: '/api', headers: { 'content-type': contentType }, payload });
  const gqlBody = (query: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ query, ...extra });

  // Refused documents, built to be as large as the body limit allows but cheap to refuse.
  const nested = `query ${'{ serverInfo '.repeat(5000)}${'}'.repeat(5000)}`;
  const aliases = `{ ${Array.from({ length: 3000 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
  const spreads = `{ ${'...F '.repeat(3000)} } fragment F on Query { __typename }`;
  const bomb = [
    '{ ...F0 }',
    ...Array.from(
      { length: 30 },
      (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`,
    ),
    'fragment F30 on Query { __typename }',
  ].join('\n');
  const tokens = `{ ${'a '.repeat(DOCUMENT_LIMITS.maxTokens + 1)} }`;
  const deepJson = `{"query":"{ __typename }","variables":{"v":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;

  const cases: Array<[string, () => ReturnType<typeof send>, Expect]> = [
    ['malformed JSON', () => send('{"query": '), { status: 400, error: /not valid JSON/ }],
    ['an empty body', () => send(''), { status: 400, error: /empty/ }],
    [
      'a prototype-polluting body',
      () => send('{"query":"{ __typename }","__proto__":{"x":1}}'),
      { status: 400, error: /not valid JSON/ },
    ],
    [
      'text/plain',
      () => send('{ __typename }', 'text/plain'),
      {
        status: 400,
        error: /content type text\/plain is not accepted here; send application\/json/,
      },
    ],
    [
      'application/graphql',
      () => send('{ __typename }', 'application/graphql'),
      { status: 400, error: /send application\/json/ },
    ],
    [
      'multipart',
      () => send('--x--', 'multipart/form-data; boundary=x'),
      { status: 400, error: /send application\/json/ },
    ],
    [
      'a body over 1 MiB',
      () => send(gqlBody(`{ __typename } # ${'x'.repeat(1024 * 1024)}`)),
      { status: 413, error: /larger than this route accepts/ },
    ],
    [
      'a JSON number',
      () => send('42'),
      { status: 400, error: /JSON object with a "query" string/ },
    ],
    [
      'a JSON string',
      () => send('"{ __typename }"'),
      { status: 400, error: /JSON object with a "query" string/ },
    ],
    ['null', () => send('null'), { status: 400, error: /JSON object/ }],
    [
      'a batch of non-objects',
      () => send('[1, "two", null]'),
      { status: 400, error: /every item of a batch must be a JSON object/ },
    ],
    [
      'a batch with one non-object',
      () => send(`[${gqlBody('{ __typename }')}, []]`),
      { status: 400, error: /every item of a batch/ },
    ],
    ['an empty batch', () => send('[]'), { status: 400, error: /batch is empty/ }],
    [
      'PUT',
      () => send(gqlBody('{ __typename }'), 'application/json', 'PUT'),
      { status: 404, error: /not_found/ },
    ],
    [
      'an object without a query',
      () => send('{"foo": 1}'),
      { status: 200, graphqlError: /no "query" string/ },
    ],
    [
      'a query that is not a string',
      () => send('{"query": {"a": 1}}'),
      { status: 200, graphqlError: /no "query" string/ },
    ],
    [
      'variables that are not an object',
      () => send(gqlBody('{ __typename }', { variables: [1] })),
      { status: 200, graphqlError: /"variables" must be a JSON object/ },
    ],
    [
      'an operationName that is not a string',
      () => send(gqlBody('{ __typename }', { operationName: 7 })),
      { status: 200, graphqlError: /"operationName" must be a string/ },
    ],
    [
      'an unknown field',
      () => send(gqlBody('{ serverInfo { nope } }')),
      { status: 200, graphqlError: /Cannot query field "nope" on type "ServerInfo"/ },
    ],
    [
      'an unknown argument',
      () => send(gqlBody('{ serverInfo(x: 1) { version } }')),
      { status: 200, graphqlError: /Unknown argument "x"/ },
    ],
    [
      'a document nested 5,000 levels deep',
      () => send(gqlBody(nested)),
      { status: 200, graphqlError: /nested too deeply/ },
    ],
    [
      '3,000 aliases',
      () => send(gqlBody(aliases)),
      { status: 200, graphqlError: /too many aliases/ },
    ],
    [
      '3,000 fragment spreads',
      () => send(gqlBody(spreads)),
      { status: 200, graphqlError: /too complex/ },
    ],
    [
      'fragments that double at every level',
      () => send(gqlBody(bomb)),
      { status: 200, graphqlError: /too complex/ },
    ],
    [
      'more tokens than allowed',
      () => send(gqlBody(tokens)),
      { status: 200, graphqlError: /more than 10000 tokens/ },
    ],
    [
      'variables nested 100,000 levels deep',
      () => send(deepJson),
      { status: 200, data: { __typename: 'Query' } },
    ],
  ];

  it.each(cases)('answers %s clearly, never with a 500', async (_label, run, expected) => {
    const res = await run();
    expect(res.statusCode).toBe(expected.status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    if ('error' in expected) {
      expect(typeof body.error).toBe('string');
      expect(`${body.error} ${body.message ?? ''}`).toMatch(expected.error);
    } else if ('data' in expected) {
      expect(body).toEqual({ data: expected.data });
    } else {
      expect(body.data).toBeUndefined();
      const messages = body.errors.map((e: { message: string }) => e.message);
      expect(
        messages.some((m: string) => expected.graphqlError.test(m)),
        messages.join('; '),
      ).toBe(true);
      // Refusals before execution are GraphQL's own: no code.
      for (const error of body.errors)
        expect(Object.keys(error.extensions)).toEqual(['request_id']);
    }
    // The process stays responsive.
    const next = await t.gql('{ serverInfo { apiVersion } }');
    expect(next.body).toEqual({ data: { serverInfo: { apiVersion: 1 } } });
  });

  it('ignores request members it does not know (such as extensions)', async () => {
    const res = await send(
      gqlBody('{ __typename }', { extensions: { persistedQuery: {} }, extra: 1 }),
    );
    expect(res.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('refuses a whole batch with an item it cannot classify, saying why for each', async () => {
    // Contract (CSRF rule 5): a request that cannot be parsed counts as needing the CSRF token,
    // so without one nothing in the batch runs; the broken items also carry their own reason.
    const res = await send(`[${gqlBody('{ __typename }')}, {"foo": 1}, ${gqlBody(aliases)}]`);
    expect(res.statusCode).toBe(200);
    const [ok, noQuery, tooMany] = res.json();
    expect(ok.errors.map((e: { message: string }) => e.message)).toEqual([
      'csrf validation failed',
    ]);
    expect(noQuery.errors.map((e: { message: string }) => e.message)).toEqual([
      'csrf validation failed',
      'request has no "query" string',
    ]);
    expect(tooMany.errors.at(-1).message).toMatch(/too many aliases/);
    for (const item of [ok, noQuery, tooMany]) expect(item.data).toBeUndefined();
  });
});
