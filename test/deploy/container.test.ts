import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { until } from '../_util/until.js';
import { freePort, PASSWORD } from '../_util/server-process.js';
import { ROOT } from './_binaries.js';
import {
  buildImage,
  ensureBase,
  missingTools,
  PODMAN,
  podman,
  podmanOk,
  skipped,
  SVC_IMAGE,
} from './_podman.js';

/** Which database this run is for (test/_util/app.ts, not imported: it loads the whole server). */
const TEST_DB = process.env.SVC_TEST_DB ?? 'sqlite';

// docs/operations.md, "In a container": the repository's Containerfile, built with podman on the
// offline base (deploy/container/offline-base.sh: Debian from debootstrap), and run. The runtime
// stage holds the build and the production dependencies only; the server runs as svc (uid 10001)
// with its data in the volume, takes its settings from SVC_* variables, passes its health check
// (/readyz) and fails it while /readyz fails, and on SIGTERM (`podman stop`) finishes the request
// in flight and exits 0. The svc command is the entry point, on the same volume.
//
// podman and debootstrap come from Debian's packages (.ci/packages installs them); where one is
// missing the tests are skipped, and their name says why, except in CI, where they fail. The
// storage is kept between runs (test/deploy/_podman.ts): the first run makes the base and
// installs the dependencies (minutes); later runs rebuild from the sources. Run once, on SQLite.

const IMAGE = SVC_IMAGE;
const USER_ID = 10001;

const MISSING = missingTools();
const SKIP = skipped(MISSING);

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

/** A name for this run's containers and volumes. */
const RUN_ID = `svc-test-${process.pid}`;

interface Answer {
  status: number;
  text: string;
}

async function graphql(port: number, query: string, variables = {}): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, text: await res.text() };
}

const LOGIN =
  'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }';

/** The status of GET `path` on the published port, or 0 when nothing answers. */
async function statusOf(port: number, urlPath: string): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}${urlPath}`)).status;
  } catch {
    return 0;
  }
}

describe.skipIf(TEST_DB !== 'sqlite' || SKIP)(
  `the container image (Containerfile)${SKIP || MISSING ? ` (skipped: ${MISSING})` : ''}`,
  () => {
    const containers: string[] = [];
    const volumes: string[] = [];

    beforeAll(async () => {
      if (MISSING) throw new Error(`cannot build the image here: ${MISSING}`);
      await ensureBase();
      await buildImage(IMAGE);
    }, 40 * 60_000);

    afterAll(async () => {
      if (!PODMAN) return;
      if (containers.length > 0) await podman(['rm', '--force', '--time', '0', ...containers]);
      if (volumes.length > 0) await podman(['volume', 'rm', '--force', ...volumes]);
    }, 120_000);

    /** A volume of this run's. */
    async function volume(name: string): Promise<string> {
      const full = `${RUN_ID}-${name}`;
      await podmanOk(['volume', 'create', full]);
      volumes.push(full);
      return full;
    }

    /**
     * Starts the server in a container with `env`, the volume at /var/lib/svc and port 8080 on a
     * free port of 127.0.0.1. No health check timer: podman asks systemd for one, and this
     * machine has no systemd; the tests run the check themselves (`podman healthcheck run`).
     */
    async function serve(name: string, vol: string, env: Record<string, string> = {}) {
      const full = `${RUN_ID}-${name}`;
      const port = await freePort();
      const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
      await podmanOk([
        'run',
        '--detach',
        '--name',
        full,
        '--health-interval',
        'disable',
        '--publish',
        `127.0.0.1:${port}:8080`,
        '--volume',
        `${vol}:/var/lib/svc`,
        ...envArgs,
        IMAGE,
      ]);
      containers.push(full);
      return { name: full, port };
    }

    it('is built in stages: the runtime holds the build and the production dependencies, no compiler', async () => {
      const [image] = JSON.parse(await podmanOk(['image', 'inspect', IMAGE])) as Array<{
        Config: Record<string, unknown>;
        Healthcheck?: { Test: string[] };
      }>;
      const config = image!.Config as {
        User: string;
        Env: string[];
        Volumes: Record<string, unknown>;
        ExposedPorts: Record<string, unknown>;
        StopSignal: string;
        Entrypoint: string[];
        Cmd: string[];
      };
      expect(config.User).toBe('svc');
      expect(config.Env).toEqual(
        expect.arrayContaining([
          'NODE_ENV=production',
          'SVC_DATA_DIR=/var/lib/svc',
          'SVC_SERVER_HOST=0.0.0.0',
          'SVC_SERVER_PORT=8080',
        ]),
      );
      expect(Object.keys(config.Volumes)).toEqual(['/var/lib/svc']);
      expect(Object.keys(config.ExposedPorts)).toEqual(['8080/tcp']);
      expect(config.StopSignal).toBe('SIGTERM');
      expect(config.Entrypoint).toEqual(['node', '/opt/svc/dist/cli/index.js']);
      expect(config.Cmd).toEqual(['serve']);
      expect(image!.Healthcheck?.Test.join(' ')).toContain('/readyz');

      // What is inside, seen by the image's own Node.js as its own user. Development-only
      // packages: those npm's lock file marks so (the tools, the test libraries, the web client's
      // build), not one a production dependency also needs.
      const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { dev?: boolean }>;
      };
      const devOnly = Object.entries(lock.packages)
        .filter(([key, p]) => p.dev === true && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(key))
        .map(([key]) => key.slice('node_modules/'.length));
      expect(devOnly).toEqual(expect.arrayContaining(['typescript', 'vitest', 'vite', 'eslint']));
      const script = `
        const fs = require('fs');
        const has = (name) => fs.existsSync('/opt/svc/node_modules/' + name + '/package.json');
        const onPath = (name) => process.env.PATH.split(':').some((d) => fs.existsSync(d + '/' + name));
        const data = fs.statSync('/var/lib/svc');
        console.log(JSON.stringify({
          uid: process.getuid(),
          top: fs.readdirSync('/opt/svc').sort(),
          missing: ${JSON.stringify(Object.keys(pkg.dependencies))}.filter((n) => !has(n)),
          dev: ${JSON.stringify(devOnly)}.filter(has),
          tools: ['gcc', 'g++', 'make', 'python3'].filter(onPath),
          writable: (() => { try { fs.accessSync('/opt/svc', fs.constants.W_OK); return true; } catch { return false; } })(),
          data: { uid: data.uid, mode: (data.mode & 0o777).toString(8) },
          web: fs.existsSync('/opt/svc/dist/web/index.html'),
        }));`;
      const out = await podmanOk(['run', '--rm', '--entrypoint', 'node', IMAGE, '-e', script]);
      expect(JSON.parse(out)).toEqual({
        uid: USER_ID,
        top: ['bin', 'dist', 'node_modules', 'package.json'],
        missing: [],
        dev: [],
        tools: [],
        writable: false,
        data: { uid: USER_ID, mode: '700' },
        web: true,
      });
    });

    it('serves as svc from its volume, set by SVC_* variables, and passes its health check', async () => {
      const vol = await volume('data');
      // The svc command, on the same volume: the schema, then an account.
      await podmanOk(['run', '--rm', '--volume', `${vol}:/var/lib/svc`, IMAGE, 'migrate']);
      await podmanOk(
        [
          'run',
          '--rm',
          '--interactive',
          '--volume',
          `${vol}:/var/lib/svc`,
          IMAGE,
          'account',
          'create',
          'dora',
          '--password-stdin',
        ],
        { input: PASSWORD },
      );

      const c = await serve('serve', vol, { SVC_INSTANCE_NOTICE: 'set by SVC_INSTANCE_NOTICE' });
      await until(async () => (await statusOf(c.port, '/readyz')) === 200, 'readiness', 90_000);

      const info = await graphql(c.port, '{ serverInfo { instanceNotice } }');
      expect(JSON.parse(info.text)).toEqual({
        data: { serverInfo: { instanceNotice: 'set by SVC_INSTANCE_NOTICE' } },
      });
      const login = await graphql(c.port, LOGIN, { u: 'dora', p: PASSWORD });
      expect(login.status).toBe(200);
      expect(JSON.parse(login.text).data.login.csrfToken).toEqual(expect.any(String));

      // The server is process 1, as svc; its database is in the volume, and svc's.
      const status = await podmanOk(['exec', c.name, 'cat', '/proc/1/status']);
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(USER_ID));
      const mountpoint = (
        await podmanOk(['volume', 'inspect', vol, '--format', '{{.Mountpoint}}'])
      ).trim();
      expect(fs.statSync(path.join(mountpoint, 'svc.sqlite')).uid).toBe(USER_ID);

      const health = await podman(['healthcheck', 'run', c.name]);
      expect(health.code, health.err).toBe(0);

      // SIGTERM (`podman stop`: the image's stop signal) while a login is in flight, its
      // headers read (`Expect: 100-continue`) and its body not yet sent.
      const body = JSON.stringify({ query: LOGIN, variables: { u: 'dora', p: PASSWORD } });
      const request = http.request({
        host: '127.0.0.1',
        port: c.port,
        method: 'POST',
        path: '/api',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          expect: '100-continue',
        },
      });
      const response = new Promise<Answer>((resolve, reject) => {
        request.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        request.on('error', reject);
      });
      await new Promise<void>((resolve) => request.on('continue', () => resolve()));

      const stopped = podman(['stop', '--time', '60', c.name], { timeoutMs: 90_000 });
      await until(
        async () => (await podmanOk(['logs', c.name])).includes('"msg":"shutting down"'),
        'the server to begin its shutdown',
        30_000,
      );
      request.end(body);
      const answer = await response;
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text).data.login.csrfToken).toEqual(expect.any(String));
      expect((await stopped).code).toBe(0);

      const state = JSON.parse(
        await podmanOk(['inspect', c.name, '--format', '{{json .State}}']),
      ) as { ExitCode: number; Status: string };
      expect({ status: state.Status, exitCode: state.ExitCode }).toEqual({
        status: 'exited',
        exitCode: 0,
      });
      const logs = (await podmanOk(['logs', c.name]))
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; signal?: string });
      expect(logs).toContainEqual(
        expect.objectContaining({ msg: 'signal received', signal: 'SIGTERM' }),
      );
    }, 240_000);

    it('fails its health check while /readyz fails', async () => {
      const vol = await volume('full');
      // More free space asked for than the disk has: /readyz answers 503, /healthz 200.
      const c = await serve('unready', vol, { SVC_DATA_MIN_FREE_MB: '1000000' });
      await until(async () => (await statusOf(c.port, '/healthz')) === 200, 'liveness', 90_000);
      expect(await statusOf(c.port, '/readyz')).toBe(503);
      const health = await podman(['healthcheck', 'run', c.name]);
      expect(health.code, health.err).toBe(1);
      expect(health.out.trim()).toBe('unhealthy');
    }, 180_000);
  },
);
