import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentHeaders, TEST_DB } from '../_util/app.js';
import type { KeyAccount } from '../devices/_keys.js';
import {
  checkHostResponse,
  deviceHeaders,
  discoveryKey,
  keyUser,
  startPeer,
  type Peer,
  type RelayAnswer,
} from '../federation/_fed.js';
import { findBinary } from './_binaries.js';
import { postPastLimit } from './_past-limit.js';
import {
  httpsRequest,
  makeCertificate,
  startCaddy,
  startNginx,
  type HttpsAnswer,
  type RunningProxy,
} from './_proxies.js';

// docs/operations.md, "Behind a reverse proxy", the bodies: the repository's nginx and Caddy
// configurations let the relay's 32 MiB through (contract: Relay, Other constants) where it
// goes, and stop bodies no route of svc takes everywhere else, where an attachment's 25 MiB is
// the most. A person's relay runs behind each proxy; the hosting server answers beside it. Through
// the proxy: a relayed body of exactly 32 MiB reaches the host and its signed answer comes back,
// one byte more is the relay's own 413 in its shape (svc answered, not the proxy); on the hosting
// server's side a 32 MiB body reaches svc's /s2s/v1 as well; nginx refuses a body past 26 MiB
// anywhere else itself. (svc's own 25 MiB upload edge through the proxies: proxies.test.ts.) Run once,
// on SQLite: the database plays no part here.

const MiB = 1024 * 1024;
const OPENSSL = findBinary('openssl');
const PROXIES = [
  // nginx refuses a body its Content-Length puts past the limit before anything reaches svc.
  // Caddy streams the body to svc and stops only when the limit is crossed: svc's own limit
  // (at most 25 MiB outside the relay) answers first, so there Caddy's 26 MiB is only a backstop.
  { name: 'nginx', binary: findBinary('nginx'), start: startNginx, refusesItself: true },
  { name: 'Caddy', binary: findBinary('caddy'), start: startCaddy, refusesItself: false },
];
function skipReason(p: (typeof PROXIES)[number]): string {
  if (!OPENSSL) return ' (skipped: openssl is not installed)';
  return p.binary ? '' : ` (skipped: ${p.name} is not installed; .ci/packages installs it)`;
}

/** svc's own refusals are JSON with an `error` code; a proxy's are its own page, or empty. */
function svcError(answer: HttpsAnswer): string | null {
  try {
    const json = JSON.parse(answer.body) as { error?: unknown };
    return typeof json.error === 'string' ? json.error : null;
  } catch {
    return null;
  }
}

describe.skipIf(TEST_DB !== 'sqlite' || PROXIES.every((p) => skipReason(p) !== ''))(
  'request bodies through the reverse proxies of deploy/',
  () => {
    /** The person's relay, behind the proxy. */
    let relay: Peer;
    /** The server hosting the space. */
    let host: Peer;
    let alice: KeyAccount;
    let dir: string;
    let cert: ReturnType<typeof makeCertificate>;

    beforeAll(async () => {
      // The relay's default time for a peer's answer, not the federation tests' 1.5 s: 32 MiB
      // is signed, sent and read back on a machine that runs other tests beside.
      relay = await startPeer({
        env: { SVC_TRUST_FORWARDED_HEADERS: 'true', SVC_S2S_TIMEOUT_MS: '10000' },
      });
      host = await startPeer({ env: { SVC_ROLE: 'host', SVC_TRUST_FORWARDED_HEADERS: 'true' } });
      alice = await keyUser(relay, 'alice');
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-proxy-bodies-'));
      if (OPENSSL) cert = makeCertificate(dir);
    }, 120_000);

    afterAll(async () => {
      await relay?.stop();
      await host?.stop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    for (const p of PROXIES) {
      describe.skipIf(skipReason(p) !== '')(`${p.name}${skipReason(p)}`, () => {
        let proxy: RunningProxy;

        beforeAll(async () => {
          const proxyDir = fs.mkdtempSync(path.join(dir, `${p.name}-`));
          // The relay behind the proxy. /s2s/ is checked on the relay's svc too: every svc
          // serves it, and a hosting server runs behind the same configuration.
          proxy = await p.start(p.binary!, proxyDir, cert, `127.0.0.1:${relay.address.port}`);
        }, 60_000);

        afterAll(async () => {
          await proxy?.stop();
        });

        /**
         * A POST of `body` to `host`'s /api through the relay, through the proxy; `pastLimit`
         * when the body is over the relay's limit, so the answer comes before it is all sent.
         */
        async function relayed(body: Buffer, pastLimit = false): Promise<RelayAnswer> {
          const dh = deviceHeaders(alice.device, {
            host: host.id,
            method: 'POST',
            path: '/api',
            body,
          });
          const urlPath = `/api/remote/${host.id}/api`;
          const sent = {
            'content-type': 'application/json',
            'content-length': String(body.length),
            ...agentHeaders(alice.agent),
            'svc-device-request': dh['svc-device-request'],
            'svc-device-signature': dh['svc-device-signature'],
          };
          const answer = pastLimit
            ? await postPastLimit(proxy.port, cert.ca, urlPath, sent, body)
            : await httpsRequest(proxy.port, cert.ca, 'POST', urlPath, { headers: sent, body });
          const headers = new Headers();
          for (const [k, v] of Object.entries(answer.headers)) {
            if (v !== undefined) headers.set(k, [v].flat().join(', '));
          }
          return {
            status: answer.status,
            headers,
            text: answer.body,
            json: () => JSON.parse(answer.body),
            nonce: dh.nonce,
          };
        }

        it("relays a body of exactly 32 MiB to the host; one byte more is the relay's own 413", async () => {
          const exact = await relayed(Buffer.alloc(32 * MiB, 0x20));
          // The host's own answer (its GraphQL route takes 1 MiB), signed for this request: the
          // whole body went through the proxy and the relay to the host.
          expect(exact.status, exact.text).not.toBe(502);
          expect(exact.json().error).not.toBe('too_large');
          checkHostResponse(exact, { host: host.id, hostKey: await discoveryKey(host) });

          const over = await relayed(Buffer.alloc(32 * MiB + 1, 0x20), true);
          expect(over.status).toBe(413);
          expect(over.json()).toEqual({ error: 'too_large', message: expect.any(String) });
        });

        it("takes 32 MiB to a hosting server's /s2s/, where relayed bodies arrive", async () => {
          // Unsigned, so svc reads the whole body and then refuses the call itself.
          const exact = await httpsRequest(proxy.port, cert.ca, 'POST', '/s2s/v1/forward/api', {
            headers: { 'content-type': 'application/json' },
            body: Buffer.alloc(32 * MiB, 0x20),
          });
          expect(exact.status).toBe(401);
          expect(svcError(exact)).not.toBeNull();
          const over = await postPastLimit(
            proxy.port,
            cert.ca,
            '/s2s/v1/forward/api',
            { 'content-type': 'application/json' },
            Buffer.alloc(32 * MiB + 1, 0x20),
          );
          expect(over.status).toBe(413);
          expect(svcError(over)).not.toBeNull();
        });

        it.skipIf(!p.refusesItself)(
          'refuses a body past 26 MiB anywhere else itself, before svc reads it',
          async () => {
            // 26 MiB is an attachment's 25 MiB and its form, with room to spare: svc's own 413
            // answers up to there (proxies.test.ts), the proxy past it.
            for (const route of ['/api/files/upload', '/api']) {
              const answer = await postPastLimit(
                proxy.port,
                cert.ca,
                route,
                { 'content-type': 'multipart/form-data; boundary=x', ...agentHeaders(alice.agent) },
                Buffer.alloc(26 * MiB + 1, 0x20),
              );
              expect(answer.status, route).toBe(413);
              expect(svcError(answer), route).toBeNull();
            }
          },
        );
      });
    }
  },
);
