import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildHttpApp } from '../../src/http/app.js';
import { PLUGIN_SANDBOX_PATH } from '../../src/http/routes/plugin-sandbox.js';
import { HSTS_VALUE } from '../../src/lib/security-headers.js';
import { agentHeaders, createTestApp, startTestServer, type Agent } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

// Issue 48, item 5: every response carries the security headers its kind needs: `nosniff`,
// frame denial and a Referrer-Policy everywhere, HSTS while SVC_PUBLIC_BASE_URL is https. Checked
// route by route over every route the app registers (listed as it registers them), as anonymous
// and signed in, and on the answers no route gives: an unknown path, a refused WebSocket upgrade.

type Server = Awaited<ReturnType<typeof startTestServer>>;

/** A concrete URL for a registered route pattern. */
const concrete = (url: string) =>
  url
    .replace(/:serverId/g, '00000000-0000-7000-8000-000000000001')
    .replace(/:[A-Za-z]+/g, 'x')
    .replace(/\*/g, 'x');

function checkHeaders(
  what: string,
  headers: Record<string, unknown>,
  o: { hsts: boolean },
): string[] {
  const problems: string[] = [];
  if (headers['x-content-type-options'] !== 'nosniff') problems.push(`${what}: no nosniff`);
  // The plugin sandbox alone is framed, by the web client's page of this origin only.
  const framedBySelf =
    what.includes(PLUGIN_SANDBOX_PATH) &&
    headers['x-frame-options'] === 'SAMEORIGIN' &&
    String(headers['content-security-policy']).includes("frame-ancestors 'self'");
  if (headers['x-frame-options'] !== 'DENY' && !framedBySelf) {
    problems.push(`${what}: no X-Frame-Options DENY`);
  }
  const referrer = headers['referrer-policy'];
  if (referrer !== 'no-referrer' && referrer !== 'same-origin') {
    problems.push(`${what}: Referrer-Policy ${String(referrer)}`);
  }
  const hsts = headers['strict-transport-security'];
  if (o.hsts && hsts !== HSTS_VALUE) problems.push(`${what}: HSTS ${String(hsts)}`);
  if (!o.hsts && hsts !== undefined) problems.push(`${what}: HSTS over http`);
  return problems;
}

describe('security headers on every route, behind https', () => {
  let server: Server;
  let routes: Array<{ method: string; url: string }>;
  let agent: Agent;
  const web = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-headers-web-'));

  beforeAll(async () => {
    fs.mkdirSync(path.join(web, 'assets'));
    fs.writeFileSync(path.join(web, 'index.html'), '<!doctype html><title>svc</title>');
    fs.writeFileSync(path.join(web, 'assets', 'x'), 'console.log(1);');
    server = await startTestServer({
      env: {
        SVC_PUBLIC_BASE_URL: 'https://chat.example.org',
        SVC_WEB_CLIENT_DIR: web,
        SVC_ENABLE_GRAPHIQL: 'true',
      },
    });
    const seen: Array<{ method: string; url: string }> = [];
    const listing = await buildHttpApp(server.ctx, {
      onRoute: (r) => {
        for (const method of [r.method].flat()) {
          if (method === 'GET' || method === 'POST') seen.push({ method, url: r.url });
        }
      },
    });
    await listing.ready();
    await listing.close();
    routes = seen;
    agent = await signUpAndIn({
      ctx: server.ctx,
      gql: async (query: string, variables?: Record<string, unknown>) => {
        const response = await server.app.inject({
          method: 'POST',
          url: '/api',
          headers: { 'content-type': 'application/json', origin: 'https://chat.example.org' },
          payload: JSON.stringify({ query, variables }),
        });
        return { status: response.statusCode, body: response.json(), response };
      },
    } as never);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(web, { recursive: true, force: true });
  });

  it('lists every route family: API, files, web app, plugin bundles, relay, s2s, probes', () => {
    const urls = routes.map((r) => r.url);
    for (const family of [
      '/api',
      '/api/files/upload',
      '/api/attachments/:id/download',
      '/',
      '/assets/:name',
      '/api/plugin-bundles/:serverId',
      '/api/remote/:host/*',
      '/s2s/v1/forward/*',
      '/healthz',
      '/.well-known/svc-server',
    ]) {
      expect(urls).toContain(family);
    }
  });

  it('sets them on every route, anonymous and signed in, whatever the answer', async () => {
    const problems: string[] = [];
    for (const route of routes) {
      for (const who of [null, agent]) {
        const res = await server.app.inject({
          method: route.method as 'GET' | 'POST',
          url: concrete(route.url),
          headers: {
            ...agentHeaders(who),
            origin: 'https://chat.example.org',
            ...(route.method === 'POST' ? { 'content-type': 'application/json' } : {}),
          },
          payload: route.method === 'POST' ? '{}' : undefined,
        });
        const what = `${route.method} ${route.url} (${res.statusCode}, ${who ? 'signed in' : 'anonymous'})`;
        problems.push(...checkHeaders(what, res.headers, { hsts: true }));
      }
    }
    expect(problems).toEqual([]);
  });

  it('sets them on an unknown path and on a refused WebSocket upgrade', async () => {
    const problems: string[] = [];
    for (const url of ['/nothing/here', '/api/nothing', '/s2s/v1/nothing']) {
      const res = await server.app.inject({ method: 'GET', url });
      problems.push(...checkHeaders(`GET ${url} (${res.statusCode})`, res.headers, { hsts: true }));
    }
    const refused = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(`${server.url}/api/ws`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          'sec-websocket-protocol': 'graphql-transport-ws',
        },
      });
      req.on('response', resolve);
      req.on('upgrade', () => reject(new Error('upgraded without a session')));
      req.on('error', reject);
      req.end();
    });
    refused.resume();
    expect(refused.statusCode).toBe(401);
    problems.push(
      ...checkHeaders('the refused upgrade', refused.headers, { hsts: false }).filter(
        (p) => !p.includes('HSTS'),
      ),
    );
    expect(problems).toEqual([]);
  });

  it('keeps the web client page its own Referrer-Policy and CSP', async () => {
    const page = await server.app.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['referrer-policy']).toBe('same-origin');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });
});

describe('security headers behind plain http', () => {
  it('sends no HSTS when SVC_PUBLIC_BASE_URL is not https', async () => {
    const t = await createTestApp();
    try {
      const problems: string[] = [];
      for (const url of ['/healthz', '/api/sdl', '/.well-known/svc-server', '/api/nothing']) {
        const res = await t.inject({ method: 'GET', url });
        problems.push(...checkHeaders(`GET ${url}`, res.headers, { hsts: false }));
      }
      expect(problems).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
