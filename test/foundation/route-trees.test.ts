import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { forbidden, rateLimited } from '../../src/errors.js';
import { RouteError } from '../../src/http/errors.js';
import type { ApiRoutes } from '../../src/http/trees/api.js';
import type { S2sRoutes } from '../../src/http/trees/s2s.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

// Routes the next features add to the trees (uploads, plugin bundles, the relay, /s2s), stood in
// for by test routes that use the same guards and error answers.
const apiRoutes: ApiRoutes = (api, _ctx, guards) => {
  api.post(
    '/test/upload',
    { preHandler: [guards.session, guards.csrf, guards.feature('attachments')] },
    async () => ({ size_bytes: 1 }),
  );
  api.post(
    '/test/bundle',
    { preHandler: [guards.session, guards.csrf, guards.feature('workspace_plugins')] },
    async () => ({ ok: true }),
  );
  api.get<{ Params: { what: string } }>('/test/fail/:what', async (request) => {
    switch (request.params.what) {
      case 'rate':
        throw rateLimited(7, 'too many uploads');
      case 'type':
        throw new RouteError(415, 'files of type text/x-shellscript are not accepted here');
      case 'bundle':
        throw new RouteError(422, 'the bundle has no manifest');
      case 'timeout':
        throw forbidden('you are timed out');
      default:
        throw new Error('a fault');
    }
  });
};

const seen: Array<{ body: unknown; session: unknown; verified: boolean }> = [];
let verified = false;
const s2sRoutes: S2sRoutes = (s2s) => {
  s2s.post('/inbox', async (request) => {
    seen.push({ body: request.body, session: request.svc.session, verified });
    return { accepted: true };
  });
};

describe('route trees', () => {
  let t: TestApp;
  let agent: Agent;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SVC_RATE_REQUESTS_PER_MIN_PER_IP: '3',
        // The guard and error tests below come from here; the limit tests from 198.51.100.0/24.
        SVC_RATE_EXEMPT_ADDRESSES: '192.0.2.0/24',
        SVC_FEATURES_DISABLED: 'workspace_plugins',
      },
      http: {
        apiRoutes: [apiRoutes],
        s2sRoutes: [s2sRoutes],
        s2sVerifier: async (request) => {
          verified = false;
          if (request.headers.signature !== 'good') throw forbidden('signature not accepted');
          verified = true;
        },
      },
    });
    agent = await signUpAndIn(t);
  });
  afterAll(async () => t?.close());

  const upload = (headers: Record<string, string>, remoteAddress = '192.0.2.10') =>
    t.inject({ method: 'POST', url: '/api/test/upload', remoteAddress, headers, payload: {} });

  describe('/api guards for routes other than GraphQL', () => {
    it('answers 401 without a session, before the CSRF check', async () => {
      const res = await upload({}, '192.0.2.11');
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'sign in first' });
    });

    it('answers 403 when the CSRF header is missing, wrong, or the cookie is not bound', async () => {
      const { cookie } = agentHeaders(agent) as { cookie: string };
      for (const headers of <Array<Record<string, string>>>[
        { cookie },
        { cookie, 'x-csrf-token': 'forged' },
        { cookie: `svc_session=${agent.cookies.svc_session}`, 'x-csrf-token': agent.csrfToken },
      ]) {
        const res = await upload(headers, '192.0.2.12');
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual({ error: 'csrf validation failed' });
      }
    });

    it('passes with a session and its CSRF token', async () => {
      const res = await upload(agentHeaders(agent), '192.0.2.13');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ size_bytes: 1 });
    });

    it('answers 403 FEATURE_DISABLED with code and feature for a disabled feature', async () => {
      const res = await t.inject({
        method: 'POST',
        url: '/api/test/bundle',
        remoteAddress: '192.0.2.14',
        headers: agentHeaders(agent),
        payload: {},
      });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({
        error: 'the workspace_plugins feature is not enabled on this server',
        code: 'FEATURE_DISABLED',
        feature: 'workspace_plugins',
      });
    });
  });

  describe('error bodies of plain routes', () => {
    const fail = (what: string) =>
      t.inject({ method: 'GET', url: `/api/test/fail/${what}`, remoteAddress: '192.0.2.20' });

    it('answers 429 with Retry-After and retryAfterSeconds', async () => {
      const res = await fail('rate');
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBe('7');
      expect(res.json()).toEqual({
        error: 'too many uploads; retry in 7 s',
        retryAfterSeconds: 7,
      });
    });

    it('answers 415, 422 and 403 as {"error"}', async () => {
      const type = await fail('type');
      expect(type.statusCode).toBe(415);
      expect(type.json()).toEqual({
        error: 'files of type text/x-shellscript are not accepted here',
      });
      const bundle = await fail('bundle');
      expect(bundle.statusCode).toBe(422);
      expect(bundle.json()).toEqual({ error: 'the bundle has no manifest' });
      const denied = await fail('timeout');
      expect(denied.statusCode).toBe(403);
      expect(denied.json()).toEqual({ error: 'you are timed out' });
    });

    it('masks a fault as 500 with the request id', async () => {
      const res = await fail('other');
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: 'internal error', request_id: expect.any(String) });
    });
  });

  describe('admission follows routing, not the raw path', () => {
    it('counts a percent-encoded /api path against the address and checks its origin', async () => {
      const post = (url: string, headers: Record<string, string> = {}) =>
        t.inject({
          method: 'POST',
          url,
          remoteAddress: '198.51.100.30',
          headers: { 'content-type': 'application/json', ...headers },
          payload: JSON.stringify({ query: '{ serverInfo { apiVersion } }' }),
        });
      // `/%61pi` is routed to POST /api.
      const first = await post('/%61pi');
      expect(first.statusCode).toBe(200);
      expect(first.json().data.serverInfo.apiVersion).toBe(1);
      const foreign = await post('/%61pi', { origin: 'https://evil.example' });
      expect(foreign.statusCode).toBe(400);
      expect(foreign.json().error).toBe('origin_not_allowed');
      expect((await post('/api')).statusCode).toBe(200);
      const over = await post('/%61pi');
      expect(over.statusCode).toBe(429);
      expect(over.headers['retry-after']).toBe('20');
    });

    it('counts unknown paths under /api, and refuses them for a foreign origin', async () => {
      const get = (url: string, headers: Record<string, string> = {}) =>
        t.inject({ method: 'GET', url, remoteAddress: '198.51.100.31', headers });
      expect((await get('/api/no-such-route')).statusCode).toBe(404);
      expect((await get('/api/no-such-route', { origin: 'https://evil.example' })).statusCode).toBe(
        400,
      );
      expect((await get('/%61pi/no-such-route')).statusCode).toBe(404);
      expect((await get('/api/no-such-route')).statusCode).toBe(429);
      // Outside /api nothing counts.
      expect((await get('/no-such-route')).statusCode).toBe(404);
    });
  });

  describe('/s2s/v1', () => {
    const inbox = (headers: Record<string, string>, payload: string | Buffer) =>
      t.inject({
        method: 'POST',
        url: '/s2s/v1/inbox',
        remoteAddress: '192.0.2.40',
        headers,
        payload,
      });

    it('verifies before the handler runs; a refused call never reaches it', async () => {
      seen.length = 0;
      const res = await inbox({ 'content-type': 'application/json', signature: 'bad' }, '{}');
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'signature not accepted' });
      expect(seen).toEqual([]);
    });

    it('hands the handler the raw bytes, whatever the content type', async () => {
      seen.length = 0;
      const json = '{ "b": 1,  "a": [2] }';
      const res = await inbox({ 'content-type': 'application/json', signature: 'good' }, json);
      expect(res.statusCode).toBe(200);
      const bytes = Buffer.from([0, 1, 2, 255]);
      await inbox({ 'content-type': 'application/octet-stream', signature: 'good' }, bytes);
      expect(seen).toHaveLength(2);
      expect(Buffer.isBuffer(seen[0]!.body)).toBe(true);
      expect((seen[0]!.body as Buffer).toString('utf8')).toBe(json);
      expect(Buffer.compare(seen[1]!.body as Buffer, bytes)).toBe(0);
      expect(seen.every((s) => s.verified)).toBe(true);
    });

    it('has no origin check, no session and no per-address limit', async () => {
      seen.length = 0;
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await inbox(
          {
            'content-type': 'application/json',
            signature: 'good',
            origin: 'https://evil.example',
            ...agentHeaders(agent),
          },
          '{}',
        );
        statuses.push(res.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      expect(seen.map((s) => s.session)).toEqual([null, null, null, null, null]);
    });

    it('answers 404 for an unknown path without running the verifier', async () => {
      const res = await t.inject({
        method: 'GET',
        url: '/s2s/v1/no-such-route',
        headers: { signature: 'bad' },
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('not_found');
    });
  });
});
