import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findBinary, ROOT } from './_binaries.js';

/** Which database this run is for (test/_util/app.ts, not imported: it loads the whole server). */
const TEST_DB = process.env.SVC_TEST_DB ?? 'sqlite';

// docs/operations.md, "With compose": deploy/compose.yaml, read by podman-compose (Debian's) as
// `up` would run it, without starting anything (`--dry-run`, on a podman storage and network
// configuration of the test's own): two svc nodes on PostgreSQL and Redis sharing one data
// volume, Caddy in front publishing 80 and 443; every SVC_* variable it sets is one
// docs/configuration.md documents; its Caddyfile is one Caddy accepts. Its images come from a
// registry by default; test/deploy/compose-up.test.ts runs the stack with those of
// deploy/compose.offline.yaml, built from Debian's packages. Run once, on SQLite.

const COMPOSE = findBinary('podman-compose');
const PODMAN = findBinary('podman');
const CADDY = findBinary('caddy');
const SKIP = !COMPOSE || !PODMAN;
const WHY = SKIP ? ' (skipped: podman-compose is not installed; .ci/packages installs it)' : '';

const ENV = { DOMAIN: 'chat.example.test', POSTGRES_PASSWORD: 'composetest1' };

/** One `podman run` podman-compose would start: its service, options and image. */
interface Started {
  service: string;
  env: Record<string, string>;
  volumes: string[];
  ports: string[];
  image: string;
}

/** The `podman run` lines of podman-compose's dry run, read back into their parts. */
function readRuns(out: string, wrapper: string): Started[] {
  const runs: Started[] = [];
  for (const line of out.split('\n')) {
    if (!line.startsWith(`${wrapper} run `)) continue;
    const words = line.split(' ');
    const started: Started = { service: '', env: {}, volumes: [], ports: [], image: '' };
    for (let i = 2; i < words.length; i++) {
      const w = words[i]!;
      if (w === '-e') {
        const [k, ...v] = words[++i]!.split('=');
        started.env[k!] = v.join('=');
      } else if (w === '-v') started.volumes.push(words[++i]!);
      else if (w === '-p') started.ports.push(words[++i]!);
      else if (w === '--label' && words[i + 1]!.startsWith('com.docker.compose.service=')) {
        started.service = words[++i]!.split('=')[1]!;
      }
    }
    started.image = words.find((w) => /^(docker\.io|localhost)\//.test(w)) ?? '';
    runs.push(started);
  }
  return runs;
}

describe.skipIf(TEST_DB !== 'sqlite' || SKIP)(
  `the compose file (deploy/compose.yaml)${WHY}`,
  () => {
    let dir: string;
    let runs: Started[];
    let out: string;

    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-compose-'));
      // The compose file in a copy of deploy/ (and the Containerfile it builds), with its .env, so
      // nothing lands in the repository.
      const deploy = path.join(dir, 'deploy');
      fs.cpSync(path.join(ROOT, 'deploy'), deploy, { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'Containerfile'), path.join(dir, 'Containerfile'));
      fs.writeFileSync(
        path.join(deploy, '.env'),
        Object.entries(ENV)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(''),
      );
      // podman as podman-compose calls it, with a storage and network settings of the test's own
      // (vfs: nothing mounted to clean up).
      const wrapper = path.join(dir, 'podman');
      fs.writeFileSync(
        wrapper,
        `#!/bin/sh\nexec ${PODMAN} --root ${dir}/storage --runroot ${dir}/run --storage-driver vfs --network-config-dir ${dir}/networks "$@"\n`,
        { mode: 0o755 },
      );
      const r = spawnSync(
        COMPOSE!,
        ['--dry-run', '--podman-path', wrapper, '-f', 'compose.yaml', 'up', '-d'],
        { cwd: deploy, encoding: 'utf8', timeout: 60_000 },
      );
      out = `${r.stdout}${r.stderr}`;
      if (r.status !== 0) throw new Error(`podman-compose exited ${r.status}:\n${out}`);
      runs = readRuns(r.stdout, wrapper);
    }, 90_000);

    afterAll(() => {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('starts PostgreSQL, Redis, two svc nodes sharing one data volume, and Caddy on 80 and 443', () => {
      expect(runs.map((r) => r.service).sort()).toEqual([
        'caddy',
        'postgres',
        'redis',
        'svc1',
        'svc2',
      ]);
      const nodes = runs.filter((r) => r.service.startsWith('svc'));
      for (const node of nodes) {
        expect(node.image).toBe('localhost/svc:latest');
        expect(node.ports).toEqual([]);
        expect(node.env).toEqual({
          SVC_DATABASE_URL: `postgres://svc:${ENV.POSTGRES_PASSWORD}@postgres:5432/svc`,
          SVC_REDIS_URL: 'redis://redis:6379',
          SVC_PUBLIC_BASE_URL: `https://${ENV.DOMAIN}`,
          SVC_TRUST_FORWARDED_HEADERS: 'true',
        });
      }
      const data = nodes.map((n) => n.volumes.find((v) => v.endsWith(':/var/lib/svc')));
      expect(data[0]).toMatch(/_data:\/var\/lib\/svc$/);
      expect(data[1]).toBe(data[0]);

      const caddy = runs.find((r) => r.service === 'caddy')!;
      expect(caddy.ports.sort()).toEqual(['443:443', '80:80']);
      expect(caddy.env).toEqual({ DOMAIN: ENV.DOMAIN });
      expect(caddy.volumes).toContainEqual(
        expect.stringMatching(/\/deploy\/compose\/Caddyfile:\/etc\/caddy\/Caddyfile:ro$/),
      );
      // The image is built from the repository's Containerfile, on the ordinary base by default.
      expect(out).toContain(
        `${dir}/podman build -t localhost/svc:latest -f ../Containerfile --build-arg BASE=docker.io/library/node:20-trixie-slim ..`,
      );
    });

    it('sets only SVC_* variables docs/configuration.md documents', () => {
      const documented = new Set(
        fs.readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8').match(/SVC_[A-Z0-9_]+/g),
      );
      const set = runs.flatMap((r) => Object.keys(r.env)).filter((k) => k.startsWith('SVC_'));
      expect(set.length).toBeGreaterThan(0);
      expect(set.filter((k) => !documented.has(k))).toEqual([]);
    });

    it.skipIf(!CADDY)(
      `has a Caddyfile Caddy accepts${CADDY ? '' : ' (skipped: Caddy is not installed)'}`,
      () => {
        const r = spawnSync(
          CADDY!,
          ['validate', '--adapter', 'caddyfile', '--config', 'deploy/compose/Caddyfile'],
          {
            cwd: ROOT,
            encoding: 'utf8',
            timeout: 30_000,
            env: { ...process.env, DOMAIN: ENV.DOMAIN, HOME: dir, XDG_DATA_HOME: dir },
          },
        );
        expect(`${r.stdout}${r.stderr}`).toContain('Valid configuration');
        expect(r.status).toBe(0);
      },
    );
  },
);
