import { describe, expect, it } from 'vitest';

import { loadConfig } from '../config/index.js';
import { CidrSet } from '../lib/address.js';
import { TokenBucketLimiter } from '../lib/token-bucket.js';

import { Admission, type AdmissionInput, type Zone } from './admission.js';

// The operator's list as IpBlockService compiles it; a test may lift it.
let denyList = new CidrSet(['203.0.113.0/24']);

function admission(env: Record<string, string> = {}, perMinute: number | null = 2) {
  const config = loadConfig({ SVC_DATA_DIR: '/tmp/unused', ...env });
  const limiter =
    perMinute === null ? null : new TokenBucketLimiter({ perMinute, burst: perMinute });
  return new Admission(config, { isBlocked: (a) => denyList.has(a) }, limiter);
}

const from = (peer: string, headers: AdmissionInput['headers'] = {}, encrypted = false) => ({
  peer,
  encrypted,
  headers: { host: 'chat.example', ...headers },
});

describe('admission', () => {
  it.each<[Zone, number | null]>([
    ['health', null],
    ['public', 403],
    ['s2s', 403],
    ['api', 403],
  ])('a denied address in zone %s gets %s', (zone, status) => {
    const verdict = admission().admit(from('203.0.113.9'), zone);
    if (status === null) expect(verdict.ok).toBe(true);
    else expect(verdict).toMatchObject({ ok: false, status, body: { error: 'blocked' } });
  });

  it('counts only the api zone, and a denied address spends no tokens', () => {
    const a = admission({ SVC_RATE_EXEMPT_ADDRESSES: '10.0.0.0/8' });
    for (const zone of ['health', 'public', 's2s'] as const) {
      for (let i = 0; i < 5; i++) expect(a.admit(from('192.0.2.1'), zone).ok).toBe(true);
    }
    expect(a.admit(from('192.0.2.1'), 'api').ok).toBe(true);
    expect(a.admit(from('192.0.2.1'), 'api').ok).toBe(true);
    expect(a.admit(from('192.0.2.1'), 'api')).toEqual({
      ok: false,
      status: 429,
      body: { error: 'rate_limited', retryAfterSeconds: 30 },
      retryAfterSeconds: 30,
    });
    for (let i = 0; i < 5; i++) expect(a.admit(from('203.0.113.9'), 'api').ok).toBe(false);
    denyList = new CidrSet([]);
    try {
      expect(a.admit(from('203.0.113.9'), 'api').ok).toBe(true);
      expect(a.admit(from('203.0.113.9'), 'api').ok).toBe(true);
      expect(a.admit(from('203.0.113.9'), 'api').ok).toBe(false);
    } finally {
      denyList = new CidrSet(['203.0.113.0/24']);
    }
    for (let i = 0; i < 5; i++) expect(a.admit(from('10.1.2.3'), 'api').ok).toBe(true);
  });

  it('checks the origin in the api zone only, after the limit', () => {
    const a = admission({ SVC_CORS_ALLOWED_ORIGIN: 'https://web.example' }, null);
    expect(a.admit(from('192.0.2.1'), 'api')).toMatchObject({ ok: true, corsOrigin: null });
    expect(a.admit(from('192.0.2.1', { origin: 'http://chat.example' }), 'api')).toMatchObject({
      ok: true,
      corsOrigin: 'http://chat.example',
    });
    expect(a.admit(from('192.0.2.1', { origin: 'https://web.example' }), 'api')).toMatchObject({
      ok: true,
      corsOrigin: 'https://web.example',
    });
    expect(a.admit(from('192.0.2.1', { origin: 'https://evil.example' }), 'api')).toMatchObject({
      ok: false,
      status: 400,
      body: { error: 'origin_not_allowed' },
    });
    for (const zone of ['health', 'public', 's2s'] as const) {
      expect(a.admit(from('192.0.2.1', { origin: 'https://evil.example' }), zone)).toMatchObject({
        ok: true,
        corsOrigin: null,
      });
    }
  });

  it('reads the client address and protocol from a proxy only when trusted', () => {
    const headers = {
      'x-forwarded-for': '198.51.100.7',
      'x-forwarded-proto': 'https',
      origin: 'https://chat.example',
    };
    const untrusted = admission({}, null).admit(from('192.0.2.1', headers), 'api');
    expect(untrusted).toMatchObject({ ok: false, status: 400 });
    const trusted = admission({ SVC_TRUST_FORWARDED_HEADERS: 'true' }, null).admit(
      from('192.0.2.1', headers),
      'api',
    );
    expect(trusted).toMatchObject({
      ok: true,
      clientAddress: '198.51.100.7',
      protocol: 'https',
      corsOrigin: 'https://chat.example',
    });
    expect(
      admission({ SVC_TRUST_FORWARDED_HEADERS: 'true' }, null).admit(
        from('192.0.2.1', { forwarded: 'for=198.51.100.8;proto=http' }, true),
        'public',
      ),
    ).toMatchObject({ ok: true, clientAddress: '198.51.100.8', protocol: 'http' });
    expect(admission({}, null).admit(from('::ffff:192.0.2.1', {}, true), 'public')).toMatchObject({
      ok: true,
      clientAddress: '192.0.2.1',
      protocol: 'https',
    });
  });
});
