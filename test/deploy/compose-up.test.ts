import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

import { newKey, signText, statement, type TestKey } from '../devices/_statements.js';
import { freePort } from '../_util/ports.js';
import { until } from '../_util/until.js';
import { COMPOSE, ComposeProject, removeOrphans } from './_compose.js';
import {
  buildImage,
  ensureBase,
  locked,
  missingTools,
  podman,
  podmanOk,
  skipped,
  SVC_IMAGE,
} from './_podman.js';
import { httpsRequest } from './_proxies.js';

// docs/operations.md, "With compose", without an image registry: deploy/compose.yaml with
// deploy/compose.offline.yaml, every image built on the Debian base (test/deploy/_podman.ts keeps
// them between runs), started by podman-compose under a project name of the test's own. Caddy
// serves DOMAIN=svc.localhost with a certificate from its own authority (Caddy's choice for a
// local name: the compose Caddyfile as it is), which the test trusts. Through it, over TLS, an
// invited person signs up with keys and signs in again. A message sent straight to one svc node
// arrives live at a subscriber on the other node and at one connected through Caddy; a file
// uploaded through one node downloads through the other (one data volume). `down -v` removes
// everything, whatever happened. Run once, on SQLite (the stack has its own PostgreSQL), where
// podman, debootstrap and podman-compose are installed; skipped otherwise, and says why, except
// in CI, where it fails.

/** Which database this run is for (test/_util/app.ts, not imported: it loads the whole server). */
const TEST_DB = process.env.SVC_TEST_DB ?? 'sqlite';

const MISSING =
  missingTools() || (COMPOSE ? '' : 'podman-compose is not installed; .ci/packages installs it');
const SKIP = skipped(MISSING);

const DOMAIN = 'svc.localhost';
const WORKSPACE_EVENTS = `subscription($id: ID!) {
  workspaceEvents(serverId: $id) { type payload }
}`;
const ORIGIN = `https://${DOMAIN}`;

interface Session {
  cookie: string;
  csrf: string;
}

describe.skipIf(TEST_DB !== 'sqlite' || SKIP)(
  `the compose stack, offline (deploy/compose.yaml, compose.offline.yaml)${SKIP || MISSING ? ` (skipped: ${MISSING})` : ''}`,
  () => {
    let dir = '';
    let project: ComposeProject | undefined;
    let port = 0;
    let ca: Buffer;
    /** Each svc node's address on the compose network, which this host reaches. */
    const nodes: Record<string, string> = {};
    const clients: Client[] = [];

    beforeAll(async () => {
      if (MISSING) throw new Error(`cannot run the stack here: ${MISSING}`);
      await removeOrphans();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-compose-up-'));
      port = await freePort();
      project = new ComposeProject(dir, {
        DOMAIN,
        POSTGRES_PASSWORD: 'composeup1',
        HTTP_PORT: String(await freePort()),
        HTTPS_PORT: String(port),
      });
      // svc's image as container.test.ts builds it (one cache for both); the others by the
      // override's own build sections.
      await ensureBase();
      await buildImage(SVC_IMAGE);
      await podmanOk(['tag', SVC_IMAGE, 'localhost/svc:latest']);
      const built = await locked(() =>
        project!.compose(['build', 'postgres', 'redis', 'caddy'], 20 * 60_000),
      );
      if (built.code !== 0) throw new Error(`podman-compose build:\n${built.out}${built.err}`);
    }, 45 * 60_000);

    beforeAll(async () => {
      const up = await project!.compose(['up', '-d'], 180_000);
      if (up.code !== 0) throw new Error(`podman-compose up:\n${up.out}${up.err}`);
      // depends_on's conditions are not podman-compose's (1.0): the nodes may start before
      // PostgreSQL takes connections, and are restarted (restart: unless-stopped) until it does.
      for (const service of ['postgres', 'redis', 'svc1', 'svc2']) {
        await until(
          async () => {
            const r = await podman(['healthcheck', 'run', project!.container(service)]);
            if (r.code !== 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
            return r.code === 0;
          },
          `${service} healthy`,
          150_000,
        );
      }
      for (const node of ['svc1', 'svc2']) {
        nodes[node] = (
          await podmanOk([
            'inspect',
            project!.container(node),
            '--format',
            '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
          ])
        ).trim();
      }
      // Caddy's own authority, made at its start for the local name.
      const volume = `${project!.name}_caddy-data`;
      const data = (
        await podmanOk(['volume', 'inspect', volume, '--format', '{{.Mountpoint}}'])
      ).trim();
      const root = path.join(data, 'caddy/pki/authorities/local/root.crt');
      await until(() => fs.existsSync(root), "Caddy's certificate authority", 60_000);
      ca = fs.readFileSync(root);
      await until(
        async () => (await throughCaddy('GET', '/readyz').catch(() => null))?.status === 200,
        'svc through Caddy',
        60_000,
      );
    }, 6 * 60_000);

    afterAll(async () => {
      await Promise.all(clients.map((c) => c.dispose()));
      if (project) await project.remove();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    }, 180_000);

    function throughCaddy(method: string, urlPath: string, headers = {}, body?: string | Buffer) {
      return httpsRequest(port, ca, method, urlPath, { servername: DOMAIN, headers, body });
    }

    /** GraphQL through Caddy, or straight to a node ('svc1', 'svc2'). */
    async function gql(
      query: string,
      variables: Record<string, unknown>,
      session?: Session,
      node?: string,
    ): Promise<{ data?: any; errors?: unknown; cookies: string[] }> {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        origin: ORIGIN,
        ...(session && { cookie: session.cookie, 'x-csrf-token': session.csrf }),
      };
      const body = JSON.stringify({ query, variables });
      if (node) {
        const res = await fetch(`http://${nodes[node]}:8080/api`, {
          method: 'POST',
          headers,
          body,
        });
        return { ...(await res.json()), cookies: res.headers.getSetCookie() };
      }
      const answer = await throughCaddy('POST', '/api', headers, body);
      const cookies = [answer.headers['set-cookie'] ?? []].flat();
      return { ...JSON.parse(answer.body), cookies };
    }

    /** A session from an answer that started one. */
    function sessionOf(answer: { data?: any; errors?: unknown; cookies: string[] }, field: string) {
      expect(answer.errors).toBeUndefined();
      for (const c of answer.cookies) expect(c).toMatch(/;\s*Secure/i);
      const cookie = answer.cookies.map((c) => c.split(';')[0]).join('; ');
      return { cookie, csrf: answer.data[field].csrfToken as string };
    }

    /** A signed statement of docs/keys.md, for a challenge asked through Caddy. */
    async function signed(audience: string, lines: Array<[string, string]>, keys: TestKey[]) {
      const asked = await gql('mutation { keyLoginChallenge { challengeId nonce serverKey } }', {});
      const ch = asked.data.keyLoginChallenge;
      const issuedAt = new Date().toISOString();
      const text = statement(audience, ch, issuedAt, lines);
      return {
        challengeId: ch.challengeId,
        issuedAt,
        signatures: keys.map((k) => signText(k, text)),
      };
    }

    const people: Record<string, { session: Session; device: TestKey }> = {};

    it('signs a person up with an invite and keys, and in again, over TLS through Caddy', async () => {
      const invite = JSON.parse(
        await podmanOk([
          'exec',
          project!.container('svc1'),
          'node',
          '/opt/svc/dist/cli/index.js',
          'invite',
          'create',
          '--max-uses',
          '2',
        ]),
      ) as { token: string };
      for (const username of ['ann', 'ben']) {
        const [identity, device] = [newKey(), newKey()];
        const s = await signed(
          'signup',
          [
            ['username', username],
            ['identity', identity.publicKey],
            ['device', device.publicKey],
          ],
          [identity, device],
        );
        const up = await gql(
          'mutation($i: SignupWithKeyInput!) { signupWithKey(input: $i) { csrfToken } }',
          {
            i: {
              username,
              identityPublicKey: identity.publicKey,
              devicePublicKey: device.publicKey,
              challengeId: s.challengeId,
              issuedAt: s.issuedAt,
              identitySignature: s.signatures[0],
              deviceSignature: s.signatures[1],
              inviteToken: invite.token,
            },
          },
        );
        people[username] = { session: sessionOf(up, 'signupWithKey'), device };
      }
      // Signing in again: a new session from the device key.
      const ann = people.ann!;
      const s = await signed('login', [['device', ann.device.publicKey]], [ann.device]);
      const login = await gql(
        'mutation($p: KeyLoginProof!) { loginWithKey(proof: $p) { user { username } csrfToken } }',
        {
          p: {
            challengeId: s.challengeId,
            devicePublicKey: ann.device.publicKey,
            issuedAt: s.issuedAt,
            signature: s.signatures[0],
          },
        },
      );
      ann.session = sessionOf(login, 'loginWithKey');
      expect(login.data.loginWithKey.user.username).toBe('ann');
      const me = await gql('{ me { username } }', {}, ann.session);
      expect(me.data).toEqual({ me: { username: 'ann' } });
    }, 60_000);

    it('delivers a message sent through one node live on the other and through Caddy', async () => {
      const { ann, ben } = people as Record<string, { session: Session }>;
      const made = await gql(
        'mutation { createWorkspace(input: { name: "Compose" }) { id channels { id } } }',
        {},
        ann!.session,
      );
      const workspace = made.data.createWorkspace;
      const invite = await gql(
        'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
        { s: workspace.id },
        ann!.session,
      );
      const joined = await gql(
        'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
        { t: invite.data.createWorkspaceInvite.token },
        ben!.session,
      );
      expect(joined.errors).toBeUndefined();

      // Ben watches straight on svc2, and through Caddy (on either node).
      const seen: Record<string, Set<string>> = { svc2: new Set(), caddy: new Set() };
      for (const [where, url] of [
        ['svc2', `ws://${nodes.svc2}:8080/api/ws`],
        ['caddy', `wss://127.0.0.1:${port}/api/ws`],
      ] as const) {
        class Socket extends WebSocket {
          constructor(address: string, protocols?: string | string[]) {
            super(address, protocols, {
              headers: { cookie: ben!.session.cookie, origin: ORIGIN, host: DOMAIN },
              // The site's name in TLS (ws passes it on to tls.connect).
              ...{ ca, servername: DOMAIN },
            });
          }
        }
        const client = createClient({ url, webSocketImpl: Socket, lazy: false, retryAttempts: 0 });
        clients.push(client);
        client.subscribe(
          { query: WORKSPACE_EVENTS, variables: { id: workspace.id } },
          {
            next: (v) => {
              const e = (v.data as { workspaceEvents?: any } | undefined)?.workspaceEvents;
              if (e?.type === 'MessageCreated') seen[where]!.add(e.payload.message.text);
            },
            error: () => {},
            complete: () => {},
          },
        );
      }
      // Ann sends straight to svc1 until a message arrives at both: each was sent once the
      // subscriptions ran, and every later one arrives too.
      const sent: string[] = [];
      await until(
        async () => {
          const text = `through svc1 #${sent.length}`;
          const r = await gql(
            'mutation($c: ID!, $t: String!) { sendMessage(input: { conversationId: $c, text: $t }) { id } }',
            { c: workspace.channels[0].id, t: text },
            ann!.session,
            'svc1',
          );
          expect(r.errors).toBeUndefined();
          sent.push(text);
          await new Promise((resolve) => setTimeout(resolve, 500));
          return seen.svc2!.size > 0 && seen.caddy!.size > 0;
        },
        'a message live on svc2 and through Caddy',
        30_000,
      );
      const first = Math.max(...Object.values(seen).map((s) => sent.indexOf([...s][0]!)));
      await until(
        () => sent.slice(first).every((t) => seen.svc2!.has(t) && seen.caddy!.has(t)),
        'every later message at both',
        10_000,
      );
    }, 60_000);

    it('keeps the stored files in one volume: uploaded through svc1, downloaded through svc2', async () => {
      const { ann } = people as Record<string, { session: Session }>;
      const made = await gql(
        'mutation { createWorkspace(input: { name: "Files" }) { channels { id } } }',
        {},
        ann!.session,
        'svc1',
      );
      const created = await gql(
        `mutation($c: ID!) { createAttachment(input: { conversationId: $c, fileName: "note.txt",
          contentType: "text/plain" }) { attachmentId uploadToken } }`,
        { c: made.data.createWorkspace.channels[0].id },
        ann!.session,
        'svc1',
      );
      const { attachmentId, uploadToken } = created.data.createAttachment;
      const form = new FormData();
      form.set('upload_token', uploadToken);
      form.set('attachment_id', attachmentId);
      const text = `stored by svc1 at ${Date.now()}`;
      form.set('file', new Blob([text], { type: 'text/plain' }), 'note.txt');
      const headers = {
        cookie: ann!.session.cookie,
        'x-csrf-token': ann!.session.csrf,
        origin: ORIGIN,
      };
      const upload = await fetch(`http://${nodes.svc1}:8080/api/files/upload`, {
        method: 'POST',
        headers,
        body: form,
      });
      expect(upload.status).toBe(200);
      const download = `/api/attachments/${attachmentId}/download`;
      const fromSvc2 = await fetch(`http://${nodes.svc2}:8080${download}`, { headers });
      expect(fromSvc2.status).toBe(200);
      expect(await fromSvc2.text()).toBe(text);
      const fromCaddy = await throughCaddy('GET', download, headers);
      expect({ status: fromCaddy.status, body: fromCaddy.body }).toEqual({
        status: 200,
        body: text,
      });
    }, 60_000);
  },
);
