import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { printPublicSdl } from '../../src/graphql/load-schema.js';
import { createTestApp, type TestApp } from '../_util/app.js';
import { DEFAULT_PASSWORD } from '../_util/seed.js';

import { createCustomApp, type CustomApp } from './custom-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('GraphQL over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_API_MAX_BATCH: '2' } });
    await t.ctx.services.accounts.createPasswordAccount({
      username: 'batcher',
      password: DEFAULT_PASSWORD,
      email: null,
    });
  });
  afterAll(async () => t?.close());

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    t.inject({
      method: 'POST',
      url: '/api',
      headers: { 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(payload),
    });
  const login = {
    query:
      'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }',
    variables: { u: 'batcher', p: DEFAULT_PASSWORD },
  };
  const sessions = async () =>
    Number(
      (
        await t.ctx.db.kysely
          .selectFrom('session')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('answers one request with one response', async () => {
    const res = await post({ query: '{ serverInfo { apiVersion } }' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ data: { serverInfo: { apiVersion: 1 } } });
  });

  it('answers a batch with an array in order', async () => {
    const res = await post([
      { query: '{ serverInfo { apiVersion } }' },
      {
        query: 'query A { a: serverInfo { version } } query B { serverInfo { apiVersion } }',
        operationName: 'B',
      },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { data: { serverInfo: { apiVersion: 1 } } },
      { data: { serverInfo: { apiVersion: 1 } } },
    ]);
  });

  it('refuses a batch over SVC_API_MAX_BATCH with 400 before any of it runs', async () => {
    expect(await sessions()).toBe(0);
    const refused = await post([login, login, login]);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toStrictEqual({ error: 'batch_too_large' });
    expect(await sessions()).toBe(0);
    // At the limit, every request runs: each login starts a session.
    const accepted = await post([login, login]);
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().map((r: { data: unknown }) => r.data !== null)).toEqual([true, true]);
    expect(await sessions()).toBe(2);
  });

  it('adds the X-Request-Id to every error and to the log lines of the request', async () => {
    const res = await post({ query: '{ me { id } }' }, { 'x-request-id': 'req-42.abc' });
    const error = res.json().errors[0];
    expect(error.extensions).toEqual({
      code: 'UNAUTHENTICATED',
      request_id: 'req-42.abc',
    });
    const lines = t.logs.lines.filter((l) => l.request_id === 'req-42.abc');
    expect(lines.some((l) => l.msg === 'request' && l.url === '/api' && l.status === 200)).toBe(
      true,
    );
  });

  it('makes a request id when none (or an unusable one) is sent', async () => {
    const variants: Record<string, string>[] = [
      {},
      { 'x-request-id': 'has spaces in it' },
      { 'x-request-id': 'x'.repeat(200) },
    ];
    for (const headers of variants) {
      const res = await post({ query: '{ me { id } }' }, headers);
      const id = res.json().errors[0].extensions.request_id;
      expect(id).toMatch(UUID);
      expect(t.logs.lines.some((l) => l.request_id === id && l.msg === 'request')).toBe(true);
    }
  });

  it('gives resolver errors a code and GraphQL’s own errors none', async () => {
    const resolver = (await post({ query: '{ me { id } }' })).json();
    expect(resolver.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const own = [
      { query: '{ serverInfo { version ' }, // syntax
      { query: '{ noSuchField }' }, // validation
      { query: 'query($n: Int!) { serverInfo { version } }', variables: { n: 'x' } }, // coercion
      { query: 'query A { serverInfo { version } } query B { serverInfo { version } }' }, // selection
      { query: 'subscription { nothing }' },
    ];
    for (const payload of own) {
      const body = (await post(payload)).json();
      expect(body.errors.length).toBeGreaterThan(0);
      for (const error of body.errors) {
        expect(Object.keys(error.extensions)).toEqual(['request_id']);
        expect(typeof error.message).toBe('string');
      }
    }
  });

  it('caches parsed and validated documents', () => {
    const source = '{ serverInfo { version apiVersion } }';
    const first = t.graphql.prepare(source);
    expect(first.ok).toBe(true);
    expect(t.graphql.prepare(source)).toBe(first);
    const bad = t.graphql.prepare('{ nope }');
    expect(t.graphql.prepare('{ nope }')).toBe(bad);
  });

  it('serves the schema at GET /api/sdl as text/plain', async () => {
    const res = await t.inject({ method: 'GET', url: '/api/sdl' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe(printPublicSdl(t.graphql.schema));
    expect(res.body).toContain('type ServerInfo {');
    expect(res.body).toContain('serverInfo: ServerInfo!');
  });

  it('answers GET /api with 404 JSON while GraphiQL is off', async () => {
    const res = await t.inject({ method: 'GET', url: '/api' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
    expect(res.json().message).toContain('SVC_ENABLE_GRAPHIQL');
    const asset = await t.inject({ method: 'GET', url: '/api/graphiql-assets/graphiql.min.js' });
    expect(asset.statusCode).toBe(404);
  });
});

describe('GraphiQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_ENABLE_GRAPHIQL: 'true' } });
  });
  afterAll(async () => t?.close());

  it('serves the explorer at GET /api from local files, with no CDN', async () => {
    const page = await t.inject({ method: 'GET', url: '/api' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources).toEqual([
      '/api/graphiql-assets/graphiql.min.css',
      '/api/graphiql-assets/react.production.min.js',
      '/api/graphiql-assets/react-dom.production.min.js',
      '/api/graphiql-assets/graphiql.min.js',
    ]);
    expect(page.body).not.toMatch(/https?:\/\//);
    for (const url of sources) {
      const asset = await t.inject({ method: 'GET', url });
      expect(asset.statusCode, url).toBe(200);
      expect(asset.headers['content-type']).toMatch(
        url.endsWith('.css') ? /^text\/css/ : /^text\/javascript/,
      );
      expect(asset.rawPayload.length).toBeGreaterThan(10_000);
    }
    // The bundle is the browser (UMD) build that takes React from the page's globals.
    const bundle = await t.inject({ method: 'GET', url: '/api/graphiql-assets/graphiql.min.js' });
    expect(bundle.body.slice(0, 400)).toContain('.GraphiQL=');
  });

  it('serves only the listed assets', async () => {
    for (const url of [
      '/api/graphiql-assets/package.json',
      '/api/graphiql-assets/..%2F..%2Fpackage.json',
      '/api/graphiql-assets/',
    ]) {
      expect((await t.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });

  it('still answers GraphQL on POST /api', async () => {
    expect((await t.gql('{ serverInfo { apiVersion } }')).body.data).toEqual({
      serverInfo: { apiVersion: 1 },
    });
  });
});

describe('resolver faults', () => {
  let c: CustomApp;
  beforeAll(async () => {
    c = await createCustomApp({
      sdl: 'extend type Query { boom: Boolean }',
      resolvers: () => ({
        Query: {
          boom: () => {
            throw new Error('secret detail of the fault');
          },
        },
      }),
    });
  });
  afterAll(async () => c?.close());

  it('are masked as INTERNAL and logged with the stack and request_id', async () => {
    const res = await c.app.inject({
      method: 'POST',
      url: '/api',
      headers: { 'content-type': 'application/json', 'x-request-id': 'fault-1' },
      payload: { query: '{ boom }' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toEqual({ boom: null });
    expect(body.errors[0].extensions).toEqual({ code: 'INTERNAL', request_id: 'fault-1' });
    expect(JSON.stringify(body)).not.toContain('secret detail');
    const logged = c.logs.lines.find((l) => l.msg === 'resolver failed');
    expect(logged?.request_id).toBe('fault-1');
    expect(JSON.stringify(logged?.err)).toContain('secret detail of the fault');
    expect((logged?.err as { stack?: string }).stack).toContain('graphql-http.test.ts');
  });
});
