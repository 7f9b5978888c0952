import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkServerId, RelayRefusal } from '../../src/federation/relay-refusal.js';
import { isServerId } from '../../src/lib/server-id.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { signUpWithKey, type KeyAccount } from '../devices/_keys.js';

import { deviceHeaders } from './_fed.js';

// Host ids of the relay route (docs/federation.md, "Roles"): checked whole before any URL is
// built from them, refused 400 `validation`, and no input of any shape answers a 5xx.

const GOOD = ['chat.example.org', 'b.example:8443', '127.0.0.1:1', '127.0.0.1:65535', 'localhost'];
const BAD = [
  '127.0.0.1:99999',
  '127.0.0.1:65536',
  '127.0.0.1:0',
  'b.example:080',
  'b.example:',
  '999.1.1.1',
  '1.2.3',
  'a.0x10',
  '[::1]:8443',
  'user@b.example',
  'B..example',
  '-b.example',
  `${'a'.repeat(64)}.example`,
];

describe('server ids', () => {
  it('accepts host names and IPv4 addresses with ports 1 to 65535, nothing else', () => {
    for (const id of GOOD) expect(isServerId(id), id).toBe(true);
    for (const id of BAD) expect(isServerId(id), id).toBe(false);
  });

  it('whatever the relay accepts builds a URL whose host is the id (generated inputs)', () => {
    const label = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
    const arbitraryId = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc
        .tuple(
          fc.array(fc.oneof(label, fc.nat(999).map(String)), { minLength: 1, maxLength: 5 }),
          fc.option(fc.oneof(fc.nat(200_000).map(String), fc.string({ maxLength: 6 }))),
        )
        .map(([labels, port]) => labels.join('.') + (port === null ? '' : `:${port}`)),
    );
    fc.assert(
      fc.property(arbitraryId, (input) => {
        let id: string;
        try {
          id = checkServerId(input);
        } catch (err) {
          expect(err).toBeInstanceOf(RelayRefusal);
          expect((err as RelayRefusal).status).toBe(400);
          return;
        }
        const url = new URL(`http://${id}/s2s/v1/forward/api`);
        expect(url.host === id || `${url.host}:80` === id).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the relay route refuses a malformed host id before it forwards', () => {
  let t: TestApp;
  let keyed: KeyAccount;
  let password: Agent;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SVC_PUBLIC_BASE_URL: 'http://127.0.0.1:1',
        SVC_ROLE: 'relay',
        SVC_S2S_INSECURE: 'true',
        SVC_OPEN_REGISTRATION: 'true',
      },
    });
    keyed = await signUpWithKey(t);
    password = await signUpAndIn(t);
  });
  afterAll(async () => t?.close());

  it('answers 400 validation for a port over 65535 and the other malformed ids', async () => {
    const body = Buffer.from('{"query":"{ me { username } }"}');
    for (const host of BAD.filter((h) => !h.includes('['))) {
      const dh = deviceHeaders(keyed.device, { host, method: 'POST', path: '/api', body });
      const res = await t.inject({
        method: 'POST',
        url: `/api/remote/${encodeURIComponent(host)}/api`,
        headers: {
          'content-type': 'application/json',
          ...agentHeaders(keyed.agent),
          'svc-device-request': dh['svc-device-request'],
          'svc-device-signature': dh['svc-device-signature'],
        },
        payload: body,
      });
      expect(res.statusCode, host).toBe(400);
      expect(res.json(), host).toEqual({ error: 'validation', message: expect.any(String) });
      expect(res.json().message, host).toMatch(/is not a server id.*65535/);
    }
  });

  it('answers no 5xx for any host id, tail and query (generated inputs)', async () => {
    const segment = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.constantFrom('127.0.0.1:99999', 'a:0', '..', '%', '%2F', '?', '#', 'b.example:443'),
    );
    const tail = fc.array(fc.string({ maxLength: 12 }), { maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(segment, tail, fc.boolean(), async (host, parts, post) => {
        const path = parts.map(encodeURIComponent).join('/');
        // Never the discovery tail: that one is fetched from the host without a device.
        if (path === '.well-known/svc-server') return;
        const res = await t.inject({
          method: post ? 'POST' : 'GET',
          url: `/api/remote/${encodeURIComponent(host)}/${path}`,
          headers: { 'content-type': 'application/json', ...agentHeaders(password) },
          payload: post ? '{}' : undefined,
        });
        expect(res.statusCode, `${host} ${path}`).toBeLessThan(500);
        if (res.statusCode !== 404) {
          expect(res.json()).toEqual({ error: expect.any(String), message: expect.any(String) });
        }
      }),
      { numRuns: 300 },
    );
  });
});
