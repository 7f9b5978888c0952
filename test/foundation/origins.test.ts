import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DESKTOP_APP_ORIGINS } from '../../src/http/origins.js';
import { createTestApp, type TestApp } from '../_util/app.js';

type Case = [label: string, headers: Record<string, string>, allowed: boolean];

async function post(t: TestApp, headers: Record<string, string>) {
  return t.inject({
    method: 'POST',
    url: '/api',
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify({ query: '{ serverInfo { apiVersion } }' }),
  });
}

function expectVerdict(
  res: Awaited<ReturnType<typeof post>>,
  origin: string | undefined,
  allowed: boolean,
) {
  if (allowed) {
    expect(res.statusCode).toBe(200);
    expect(res.json().data.serverInfo.apiVersion).toBe(1);
    if (origin !== undefined) {
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(res.headers['access-control-expose-headers']).toBe('Retry-After');
    } else {
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  } else {
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('origin_not_allowed');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  }
}

describe('origins without SVC_PUBLIC_BASE_URL (own origin from the request)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_CORS_ALLOWED_ORIGIN: 'https://web.example.com' } });
  });
  afterAll(async () => t?.close());

  const host = { host: 'chat.local:8080' };
  const cases: Case[] = [
    ['no Origin header', { ...host }, true],
    ['the origin the request addressed', { ...host, origin: 'http://chat.local:8080' }, true],
    ['the same origin in other case', { ...host, origin: 'HTTP://Chat.LOCAL:8080' }, true],
    ['another port of the same host', { ...host, origin: 'http://chat.local:9090' }, false],
    ['another scheme of the same host', { ...host, origin: 'https://chat.local:8080' }, false],
    [
      'own origin with the default port written',
      { host: 'chat.local', origin: 'http://chat.local:80' },
      true,
    ],
    [
      'own origin when Host carries the default port',
      { host: 'chat.local:80', origin: 'http://chat.local' },
      true,
    ],
    ['SVC_CORS_ALLOWED_ORIGIN', { ...host, origin: 'https://web.example.com' }, true],
    [
      'SVC_CORS_ALLOWED_ORIGIN in upper case with :443',
      { ...host, origin: 'HTTPS://WEB.EXAMPLE.COM:443' },
      true,
    ],
    ['SVC_CORS_ALLOWED_ORIGIN over http', { ...host, origin: 'http://web.example.com' }, false],
    ...DESKTOP_APP_ORIGINS.map((o): Case => [`desktop origin ${o}`, { ...host, origin: o }, true]),
    [
      'desktop origin in upper case',
      { ...host, origin: 'HTTPS://SVC-DESKTOP.LOCALHOST:443' },
      true,
    ],
    ['desktop scheme on another host', { ...host, origin: 'svc-desktop://evil.example' }, false],
    ['a foreign origin', { ...host, origin: 'https://evil.example' }, false],
    ['the opaque origin "null"', { ...host, origin: 'null' }, false],
    ['garbage', { ...host, origin: 'not an origin' }, false],
    [
      'forwarded host and proto while not trusted',
      {
        ...host,
        origin: 'https://public.example',
        'x-forwarded-host': 'public.example',
        'x-forwarded-proto': 'https',
      },
      false,
    ],
  ];

  it.each(cases)('%s', async (_label, headers, allowed) => {
    expectVerdict(await post(t, headers), headers.origin, allowed);
  });

  it('refuses only under /api: probes, discovery and /s2s are outside the check', async () => {
    const origin = { origin: 'https://evil.example' };
    for (const url of ['/healthz', '/readyz', '/.well-known/svc-server']) {
      const res = await t.inject({ method: 'GET', url, headers: origin });
      expect(res.statusCode, url).toBe(200);
    }
    const s2s = await t.inject({ method: 'GET', url: '/s2s/v1/anything', headers: origin });
    expect(s2s.statusCode).not.toBe(400);
    for (const url of ['/api/sdl', '/api', '/api/anything']) {
      const res = await t.inject({ method: 'GET', url, headers: origin });
      expect(res.statusCode, url).toBe(400);
    }
  });

  it('answers an allowed preflight with the CORS permissions', async () => {
    const res = await t.inject({
      method: 'OPTIONS',
      url: '/api',
      headers: {
        origin: 'https://web.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-csrf-token',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://web.example.com');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
    expect(res.headers['access-control-allow-headers']).toBe(
      'Content-Type, Authorization, X-CSRF-Token, X-Request-Id',
    );
    expect(res.headers['access-control-max-age']).toBe('3600');
    expect(res.headers['access-control-expose-headers']).toBe('Retry-After');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('refuses the preflight of a foreign origin', async () => {
    const res = await t.inject({
      method: 'OPTIONS',
      url: '/api',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('origins behind a trusted proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_TRUST_FORWARDED_HEADERS: 'true' } });
  });
  afterAll(async () => t?.close());

  const cases: Case[] = [
    [
      'X-Forwarded-Proto and X-Forwarded-Host',
      {
        host: '10.0.0.5:8080',
        'x-forwarded-host': 'Chat.Example.org',
        'x-forwarded-proto': 'https',
        origin: 'https://chat.example.org',
      },
      true,
    ],
    [
      'the internal Host once a proxy names another',
      {
        host: '10.0.0.5:8080',
        'x-forwarded-host': 'chat.example.org',
        'x-forwarded-proto': 'https',
        origin: 'http://10.0.0.5:8080',
      },
      false,
    ],
    [
      'Forwarded proto=https with Host',
      {
        host: 'chat.example.org',
        forwarded: 'for=192.0.2.1;proto=https',
        origin: 'https://chat.example.org',
      },
      true,
    ],
    [
      'plain Host without forwarded headers',
      { host: 'chat.example.org', origin: 'http://chat.example.org' },
      true,
    ],
  ];

  it.each(cases)('%s', async (_label, headers, allowed) => {
    expectVerdict(await post(t, headers), headers.origin, allowed);
  });
});

describe('origins with SVC_PUBLIC_BASE_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { SVC_PUBLIC_BASE_URL: 'https://chat.example.org/' } });
  });
  afterAll(async () => t?.close());

  const cases: Case[] = [
    ['the configured origin', { host: 'internal:8080', origin: 'https://chat.example.org' }, true],
    [
      'the configured origin with :443',
      { host: 'internal:8080', origin: 'https://chat.example.org:443' },
      true,
    ],
    [
      'the origin the request addressed',
      { host: 'internal:8080', origin: 'http://internal:8080' },
      false,
    ],
    ['a desktop origin', { host: 'internal:8080', origin: DESKTOP_APP_ORIGINS[0] }, true],
  ];

  it.each(cases)('%s', async (_label, headers, allowed) => {
    expectVerdict(await post(t, headers), headers.origin, allowed);
  });
});
