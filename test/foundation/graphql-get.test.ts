import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD, signUpAndIn } from '../_util/seed.js';

/** GET /api with URL parameters, as GraphQL over HTTP encodes them. */
const url = (params: Record<string, unknown>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    q.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return `/api?${q.toString()}`;
};

const sessionCount = async (t: TestApp) =>
  Number(
    (
      await t.ctx.db.kysely
        .selectFrom('session')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('GraphQL queries over GET /api', () => {
  let t: TestApp;
  let ann: Agent;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SVC_PUBLIC_BASE_URL: 'https://chat.example',
        SVC_RATE_REQUESTS_PER_MIN_PER_IP: '1000',
      },
    });
    ann = await signUpAndIn(t, { username: 'getann' });
  });
  afterAll(async () => t?.close());

  it('runs a query from the query parameter, with the session cookie and no CSRF header', async () => {
    const res = await t.inject({
      method: 'GET',
      url: url({ query: '{ me { username } serverInfo { apiVersion } }' }),
      headers: { cookie: agentHeaders(ann).cookie! },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      data: { me: { username: 'getann' }, serverInfo: { apiVersion: 1 } },
    });
  });

  it('reads JSON-encoded variables, operationName and extensions', async () => {
    const res = await t.inject({
      method: 'GET',
      url: url({
        query:
          'query A { serverInfo { version } } query B($c: ID!) { messages(conversationId: $c) { items { id } } }',
        operationName: 'B',
        variables: { c: 'not-an-id' },
        extensions: { note: 'ignored' },
      }),
      headers: { cookie: agentHeaders(ann).cookie! },
    });
    // B ran with the variable: its own answer, not a parse or variable error.
    expect(res.json().errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('refuses a mutation with 405 and Allow: POST, and runs nothing', async () => {
    const before = await sessionCount(t);
    const login = `mutation { login(input: { username: "getann", password: "${DEFAULT_PASSWORD}" }) { csrfToken } }`;
    for (const params of [
      { query: login },
      {
        query: `query Q { serverInfo { apiVersion } } ${login.replace('mutation', 'mutation M')}`,
        operationName: 'M',
      },
    ]) {
      const res = await t.inject({ method: 'GET', url: url(params) });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    // With the session and CSRF header too: a mutation never runs over GET.
    const logout = await t.inject({
      method: 'GET',
      url: url({ query: 'mutation { logout }' }),
      headers: agentHeaders(ann),
    });
    expect(logout.statusCode).toBe(405);
    expect(await sessionCount(t)).toBe(before);
    const still = await t.gql('{ me { username } }', {}, ann);
    expect(still.body.data).toEqual({ me: { username: 'getann' } });
  });

  it('formats errors as POST does, with request_id', async () => {
    const unauth = await t.inject({
      method: 'GET',
      url: url({ query: '{ me { username } }' }),
      headers: { 'x-request-id': 'get-req-1' },
    });
    expect(unauth.statusCode).toBe(200);
    const err = unauth.json().errors[0];
    expect(err.extensions).toMatchObject({ code: 'UNAUTHENTICATED', request_id: 'get-req-1' });

    const broken = await t.inject({ method: 'GET', url: url({ query: '{ nope }' }) });
    expect(broken.statusCode).toBe(200);
    expect(broken.json().errors[0].extensions).toEqual({ request_id: expect.any(String) });

    const badVars = await t.inject({
      method: 'GET',
      url: `/api?query=${encodeURIComponent('{ serverInfo { apiVersion } }')}&variables=%7Bnot-json`,
    });
    expect(badVars.statusCode).toBe(200);
    expect(badVars.json().errors[0].message).toBe('"variables" must be a JSON object');

    const twice = await t.inject({ method: 'GET', url: '/api?query=%7Bme%7Bid%7D%7D&query=x' });
    // As POST answers the same body: the CSRF refusal (a query that cannot be read might be a
    // mutation) and the reason.
    expect(twice.json().errors.map((e: { message: string }) => e.message)).toEqual([
      'csrf validation failed',
      'request has no "query" string',
    ]);

    const sub = await t.inject({
      method: 'GET',
      url: url({ query: 'subscription { relayStream { __typename } }' }),
    });
    expect(sub.statusCode).toBe(200);
    expect(sub.json().errors[0].message).toBe('subscriptions run over the WebSocket at /api/ws');
  });

  it('applies the origin rule of /api', async () => {
    const foreign = await t.inject({
      method: 'GET',
      url: url({ query: '{ serverInfo { apiVersion } }' }),
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error).toBe('origin_not_allowed');
  });

  it('keeps answering GET /api without a query parameter with 404 while the explorer is off', async () => {
    const res = await t.inject({ method: 'GET', url: '/api?variables=%7B%7D' });
    expect(res.statusCode).toBe(404);
    expect(res.json().message).toContain('SVC_ENABLE_GRAPHIQL');
  });
});

describe('GET /api with the explorer on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_ENABLE_GRAPHIQL: 'true' } });
  });
  afterAll(async () => t?.close());

  it('serves the explorer without a query parameter and runs one with it', async () => {
    const page = await t.inject({ method: 'GET', url: '/api' });
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const res = await t.inject({
      method: 'GET',
      url: url({ query: '{ serverInfo { apiVersion } }' }),
    });
    expect(res.json()).toEqual({ data: { serverInfo: { apiVersion: 1 } } });
  });
});

describe('GET /api and the per-address limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_RATE_REQUESTS_PER_MIN_PER_IP: '2' } });
  });
  afterAll(async () => t?.close());

  it('counts GET queries against the address like any /api request', async () => {
    const get = () =>
      t.inject({ method: 'GET', url: url({ query: '{ serverInfo { apiVersion } }' }) });
    expect((await get()).statusCode).toBe(200);
    expect((await get()).statusCode).toBe(200);
    const third = await get();
    expect(third.statusCode).toBe(429);
    expect(third.json().error).toBe('rate_limited');
  });
});
