import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { startTestServer, TEST_DB } from '../_util/app.js';
import { PASSWORD } from '../_util/server-process.js';
import { until, WORKSPACE_EVENTS } from '../realtime/_helpers.js';
import { findBinary } from './_binaries.js';
import {
  httpsRequest,
  makeCertificate,
  startCaddy,
  startNginx,
  type HttpsAnswer,
  type RunningProxy,
} from './_proxies.js';

// docs/operations.md, "Behind a reverse proxy": the repository's nginx and Caddy configurations
// (deploy/) run in front of a real svc, with a certificate the test makes. Through each: svc's
// page keeps its own Content-Security-Policy, sign-in sets Secure cookies, a mutation needs the
// CSRF token and a same-origin Origin, a subscription lives over the proxied WebSocket, and the
// per-address rate limit counts each client's own address (not the proxy's, nor one a client
// claims). nginx and Caddy come from Debian's packages (.ci/packages installs them); a proxy
// that is not installed is skipped with a line saying so. Run once, on SQLite: the database plays
// no part in what is tested here.

const OPENSSL = findBinary('openssl');
const PROXIES = [
  { name: 'nginx', binary: findBinary('nginx'), start: startNginx, net: 1 },
  { name: 'Caddy', binary: findBinary('caddy'), start: startCaddy, net: 2 },
];
/** Why a proxy's tests are skipped, or '' when they run. */
function skipReason(p: (typeof PROXIES)[number]): string {
  if (!OPENSSL) return ' (skipped: openssl is not installed)';
  return p.binary ? '' : ` (skipped: ${p.name} is not installed; .ci/packages installs it)`;
}

/** Requests per minute per address: the flooding client passes it, the others stay under. */
const LIMIT = 20;

describe.skipIf(TEST_DB !== 'sqlite' || PROXIES.every((p) => skipReason(p) !== ''))(
  'svc behind the reverse proxies of deploy/',
  () => {
    let svc: Awaited<ReturnType<typeof startTestServer>>;
    let dir: string;
    let cert: ReturnType<typeof makeCertificate>;

    beforeAll(async () => {
      svc = await startTestServer({
        env: {
          SVC_TRUST_FORWARDED_HEADERS: 'true',
          SVC_RATE_REQUESTS_PER_MIN_PER_IP: String(LIMIT),
        },
      });
      await svc.ctx.services.accounts.createPasswordAccount({
        username: 'olga',
        password: PASSWORD,
        email: null,
      });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-proxy-'));
      if (OPENSSL) cert = makeCertificate(dir);
    });

    afterAll(async () => {
      await svc?.stop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    for (const p of PROXIES) {
      const { name, binary, start, net } = p;
      describe.skipIf(skipReason(p) !== '')(`${name}${skipReason(p)}`, () => {
        let proxy: RunningProxy;
        let origin: string;
        /** Each client connects from an address of its own (127.0.<client>.<proxy>). */
        const from = (client: number) => `127.0.${client}.${net}`;
        let cookie = '';
        let csrf = '';

        function request(
          method: string,
          urlPath: string,
          opts: { headers?: Record<string, string>; body?: string | Buffer; client?: number } = {},
        ): Promise<HttpsAnswer> {
          return httpsRequest(proxy.port, cert.ca, method, urlPath, {
            ...opts,
            localAddress: from(opts.client ?? 1),
          });
        }

        async function gql(
          query: string,
          variables: Record<string, unknown> = {},
          headers: Record<string, string> = {},
          client = 1,
        ): Promise<{ status: number; json: any; answer: HttpsAnswer }> {
          const answer = await request('POST', '/api', {
            headers: { 'content-type': 'application/json', origin, ...headers },
            body: JSON.stringify({ query, variables }),
            client,
          });
          return { status: answer.status, json: JSON.parse(answer.body), answer };
        }

        beforeAll(async () => {
          const proxyDir = fs.mkdtempSync(path.join(dir, `${name}-`));
          proxy = await start(binary!, proxyDir, cert, `127.0.0.1:${svc.address.port}`);
          origin = `https://127.0.0.1:${proxy.port}`;
        }, 60_000);

        afterAll(async () => {
          await proxy?.stop();
        });

        it("serves the web client with svc's own Content-Security-Policy, and HSTS", async () => {
          const direct = await fetch(`${svc.url}/`);
          const through = await request('GET', '/');
          expect(through.status).toBe(200);
          expect(direct.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
          expect(through.headers['content-security-policy']).toBe(
            direct.headers.get('content-security-policy'),
          );
          expect(through.headers['strict-transport-security']).toBe('max-age=31536000');
        });

        it('signs in with Secure cookies, and asks mutations for the CSRF token and the origin', async () => {
          const LOGIN = `mutation($u: String!, $p: String!) {
        login(input: { username: $u, password: $p }) { csrfToken }
      }`;
          const res = await gql(LOGIN, { u: 'olga', p: PASSWORD });
          expect(res.json.errors).toBeUndefined();
          const cookies = [res.answer.headers['set-cookie'] ?? []].flat();
          expect(cookies.map((c) => c.split('=')[0]).sort()).toEqual(['svc_csrf', 'svc_session']);
          for (const c of cookies) expect(c).toMatch(/;\s*Secure/i);
          cookie = cookies.map((c) => c.split(';')[0]).join('; ');
          csrf = res.json.data.login.csrfToken;
          // The same sign-in straight to svc over plain HTTP: not Secure (the proxy said https).
          const plain = await fetch(`${svc.url}/api`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: LOGIN, variables: { u: 'olga', p: PASSWORD } }),
          });
          expect(plain.headers.getSetCookie().join()).not.toMatch(/Secure/i);

          const CREATE = 'mutation { createWorkspace(input: { name: "Proxied" }) { id } }';
          const noToken = await gql(CREATE, {}, { cookie });
          expect(noToken.json.errors?.[0]?.message).toBe('csrf validation failed');
          const otherOrigin = await gql(
            CREATE,
            {},
            { cookie, 'x-csrf-token': csrf, origin: 'https://elsewhere.example' },
          );
          expect(otherOrigin.status).toBe(400);
          expect(JSON.parse(otherOrigin.answer.body).error).toBe('origin_not_allowed');
          const made = await gql(CREATE, {}, { cookie, 'x-csrf-token': csrf });
          expect(made.json.errors).toBeUndefined();
          expect(made.json.data.createWorkspace.id).toBeTruthy();
        });

        it('keeps a subscription over the proxied WebSocket', async () => {
          const ws = await gql(
            'mutation { createWorkspace(input: { name: "Live" }) { id channels { id name } } }',
            {},
            { cookie, 'x-csrf-token': csrf },
          );
          const workspace = ws.json.data.createWorkspace;
          const general = workspace.channels.find((c: { name: string }) => c.name === 'general').id;
          class ProxiedSocket extends WebSocket {
            constructor(address: string, protocols?: string | string[]) {
              super(address, protocols, {
                headers: { cookie, origin },
                ca: cert.ca,
                localAddress: from(1),
              });
            }
          }
          const client = createClient({
            url: `wss://127.0.0.1:${proxy.port}/api/ws`,
            webSocketImpl: ProxiedSocket,
            retryAttempts: 0,
            lazy: false,
            onNonLazyError: () => {},
          });
          const texts: string[] = [];
          let failure: unknown = null;
          client.subscribe(
            { query: WORKSPACE_EVENTS, variables: { id: workspace.id } },
            {
              next: (v) => {
                const e = (v.data as { workspaceEvents?: any } | undefined)?.workspaceEvents;
                if (e?.type === 'MessageCreated') texts.push(e.payload.message.text);
              },
              error: (err) => (failure = err),
              complete: () => {},
            },
          );
          try {
            await until(
              async () => ((await svc.ctx.metrics.wsSubscriptions.get()).values[0]?.value ?? 0) > 0,
              'the subscription running',
              10_000,
            );
            for (const text of ['through the proxy', 'and again']) {
              const sent = await gql(
                'mutation($c: ID!, $t: String!) { sendMessage(input: { conversationId: $c, text: $t }) { id } }',
                { c: general, t: text },
                { cookie, 'x-csrf-token': csrf },
              );
              expect(sent.json.errors).toBeUndefined();
            }
            await until(() => texts.length === 2, 'both messages over the WebSocket', 10_000);
            expect(texts).toEqual(['through the proxy', 'and again']);
            expect(failure).toBeNull();
          } finally {
            await client.dispose();
          }
        });

        it("passes an upload of exactly 25 MiB, and svc's 413 for one byte more", async () => {
          const made = await gql(
            'mutation { createWorkspace(input: { name: "Files" }) { channels { id name } } }',
            {},
            { cookie, 'x-csrf-token': csrf },
          );
          const channel = made.json.data.createWorkspace.channels[0].id;
          const MAX = 25 * 1024 * 1024;
          const statuses: number[] = [];
          for (const size of [MAX, MAX + 1]) {
            const created = await gql(
              `mutation($c: ID!) { createAttachment(input: { conversationId: $c,
                fileName: "big.txt", contentType: "text/plain" }) { attachmentId uploadToken } }`,
              { c: channel },
              { cookie, 'x-csrf-token': csrf },
            );
            const { attachmentId, uploadToken } = created.json.data.createAttachment;
            const boundary = `svcproxy${size}`;
            const field = (n: string, v: string) =>
              `--${boundary}\r\ncontent-disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`;
            const body = Buffer.concat([
              Buffer.from(
                field('upload_token', uploadToken) +
                  field('attachment_id', attachmentId) +
                  `--${boundary}\r\ncontent-disposition: form-data; name="file"; ` +
                  `filename="big.txt"\r\ncontent-type: text/plain\r\n\r\n`,
              ),
              Buffer.alloc(size, 'a'),
              Buffer.from(`\r\n--${boundary}--\r\n`),
            ]);
            const answer = await request('POST', '/api/files/upload', {
              headers: {
                'content-type': `multipart/form-data; boundary=${boundary}`,
                'content-length': String(body.length),
                cookie,
                'x-csrf-token': csrf,
                origin,
              },
              body,
              client: 4,
            });
            statuses.push(answer.status);
            if (size === MAX) expect(JSON.parse(answer.body)).toEqual({ size_bytes: MAX });
          }
          expect(statuses).toEqual([200, 413]);
        });

        it('rate-limits each client by its own address, whatever it claims', async () => {
          const ask = (client: number, claim: number) =>
            gql(
              '{ __typename }',
              {},
              {
                'x-forwarded-for': `203.0.113.${claim}`,
                forwarded: `for=198.51.100.${claim}`,
              },
              client,
            );
          const statuses: number[] = [];
          // A new claimed address each time: a server that believed one would never limit.
          for (let i = 0; i <= LIMIT; i += 1) statuses.push((await ask(2, i)).status);
          expect(statuses.slice(0, LIMIT).every((s) => s === 200)).toBe(true);
          expect(statuses[LIMIT]).toBe(429);
          // Another client, and the one signed in, are not limited by it (not counted as the proxy).
          expect((await ask(3, 1)).status).toBe(200);
          expect((await gql('{ __typename }')).status).toBe(200);
        });
      });
    }
  },
);
