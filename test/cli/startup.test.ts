import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestDatabase, type TestDatabase } from '../_util/app.js';

import { cli } from './cli-io.js';

// The CLI loads per command only what that command needs (docs/cli.md, "Start-up"): `--help` and
// `--version` nothing of the server, `account create` the database and the accounts' creation but
// no HTTP, GraphQL, events or other services. How long that takes is measured by the bench
// scenario `cli`; this holds which modules load, so a top-level import that drags the server back
// in fails here.

const root = path.resolve(import.meta.dirname, '../..');
const tracer = path.join(import.meta.dirname, 'fixtures/trace-loads.mjs');

/** Runs `svc args` from source in a child process; what it loaded (module URLs and paths). */
function loadsOf(args: string[], env: Record<string, string>, input = ''): string[] {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-trace-')), 'loads.txt');
  const res = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', tracer, path.join(root, 'src/cli/index.ts'), ...args],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', ...env, SVC_TRACE_LOADS: out },
      input,
      encoding: 'utf8',
    },
  );
  expect(res.stderr).toBe('');
  expect(res.status).toBe(0);
  const loads = fs.readFileSync(out, 'utf8').split('\n').filter(Boolean);
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  return loads;
}

/** The packages (node_modules) and src/ files among `loads`. */
function summarize(loads: string[]): { packages: Set<string>; sources: Set<string> } {
  const packages = new Set<string>();
  const sources = new Set<string>();
  for (const load of loads) {
    const file = load.replace(/^file:\/\//, '');
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    if (pkg) packages.add(pkg[1]!);
    else if (file.startsWith(`${root}/src/`)) sources.add(file.slice(root.length + 1));
  }
  return { packages, sources };
}

/** What no command but `serve` (and the ones that build the whole server) should load. */
const SERVER_PACKAGES = ['fastify', 'graphql', 'graphql-jit', 'ioredis', 'sharp', 'nodemailer'];

describe('svc start-up', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    expect((await cli(['migrate'], database.env)).code).toBe(0);
  });
  afterAll(async () => database?.drop());

  it.each([['--help'], ['--version']])(
    'svc %s loads commander and the command list only',
    (arg) => {
      const { packages, sources } = summarize(loadsOf([arg], database.env));
      // tsx, which runs the sources here, loads esbuild and its own helpers.
      const ours = [...packages].filter((p) => !['tsx', 'esbuild', 'get-tsconfig'].includes(p));
      expect(ours).toEqual(['commander']);
      for (const file of sources) {
        expect(file).toMatch(
          /^src\/(cli\/|version\.ts|errors\.ts|config\/config-error\.ts|auth\/actor\.ts|services\/audit\/audit-page\.ts)/,
        );
      }
    },
  );

  it('svc account create loads the database and the accounts, not the server', () => {
    const { packages, sources } = summarize(
      loadsOf(
        ['account', 'create', 'quick', '--password-stdin'],
        database.env,
        'a long password 1\n',
      ),
    );
    expect(packages).toContain('kysely');
    expect(packages).toContain('@node-rs/argon2');
    for (const p of SERVER_PACKAGES) expect(packages).not.toContain(p);
    // pg only for PostgreSQL, better-sqlite3 only for SQLite (db/postgres/module.ts).
    if (database.env.SVC_DATABASE_URL) expect(packages).toContain('pg');
    else expect(packages).not.toContain('pg');
    expect(sources).not.toContain('src/context.ts');
    expect(sources).not.toContain('src/main.ts');
    expect(
      [...sources].filter((s) => /^src\/services\/(?!accounts\/|audit\/audit-page)/.test(s)),
    ).toEqual([]);
  });
});
