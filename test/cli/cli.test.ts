import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { pendingMigrations } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import {
  createTestApp,
  createTestDatabase,
  startTestServer,
  type TestDatabase,
} from '../_util/app.js';
import { signIn } from '../_util/seed.js';

import { cli } from './cli-io.js';

const root = path.resolve(import.meta.dirname, '../..');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PASSWORD = 'a long enough password 42';

describe('svc CLI', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase();
    env = { ...database.env, SVC_LOG_LEVEL: 'warn' };
  });
  afterAll(async () => database?.drop());

  it('prints help with every command and exits 0', async () => {
    const run = await cli(['--help'], env);
    expect(run.code).toBe(0);
    for (const command of ['serve', 'migrate', 'account', 'operator', 'ip']) {
      expect(run.out).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    }
    const ip = await cli(['ip', '--help'], env);
    expect(ip.code).toBe(0);
    expect(ip.out).toContain('block [options] <cidr>');
    expect(ip.out).toContain('unblock <cidr>');
  });

  it.each([
    [[], /Usage: svc/],
    [['bogus'], /unknown command 'bogus'/],
    [['ip'], /Usage: svc ip/],
    [['ip', 'block'], /missing required argument 'cidr'/],
    [
      ['ip', 'block', '10.0.0.1', '--expires-in-days', 'soon'],
      /--expires-in-days.*whole number of days/,
    ],
    [['account', 'create', 'someone'], /--password-stdin/],
    [['operator', 'grant'], /missing required argument 'username'/],
  ])('exits 2 on bad usage: %j', async (argv, message) => {
    const run = await cli(argv, env);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(message);
  });

  it('migrates and says so', async () => {
    const run = await cli(['migrate'], env);
    expect(run).toMatchObject({ code: 0, out: 'migrations are up to date\n' });
  });

  it('creates an account from a password on standard input and prints JSON with its id', async () => {
    const run = await cli(
      ['account', 'create', 'carol', '--password-stdin', '--email', 'carol@example.org'],
      env,
      `${PASSWORD}\n`,
    );
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const created = JSON.parse(run.out);
    expect(created).toMatchObject({ username: 'carol', email: 'carol@example.org' });
    expect(created.id).toMatch(UUID);

    // The account is real: the server signs it in with that password (trailing newline dropped).
    const t = await createTestApp({ database });
    try {
      const agent = await signIn(t, 'carol', PASSWORD);
      expect(agent.id).toBe(created.id);
    } finally {
      await t.close();
    }
  });

  it('refuses a taken username with exit 1 and a clear message', async () => {
    const run = await cli(['account', 'create', 'carol', '--password-stdin'], env, PASSWORD);
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(run.err).toMatch(/^svc: .*\((CONFLICT|VALIDATION)\)\n$/);
  });

  it('grants and revokes the operator role', async () => {
    const grant = await cli(['operator', 'grant', 'carol'], env);
    expect(grant.code).toBe(0);
    expect(JSON.parse(grant.out)).toMatchObject({ username: 'carol', instanceOperator: true });
    const revoke = await cli(['operator', 'revoke', 'carol'], env);
    expect(revoke.code).toBe(0);
    expect(JSON.parse(revoke.out)).toMatchObject({ username: 'carol', instanceOperator: false });
    const unknown = await cli(['operator', 'grant', 'nobody'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^svc: account "nobody" not found \(NOT_FOUND\)\n$/);
  });

  it('blocks, lists and unblocks addresses', async () => {
    const block = await cli(
      ['ip', 'block', '203.0.113.7/24', '--reason', 'spam wave', '--expires-in-days', '2'],
      env,
    );
    expect(block.code).toBe(0);
    const view = JSON.parse(block.out);
    expect(view).toMatchObject({ cidr: '203.0.113.0/24', reason: 'spam wave', createdBy: 'cli' });
    expect(Date.parse(view.expiresAt) - Date.parse(view.createdAt)).toBe(2 * 86_400_000);

    const list = await cli(['ip', 'list'], env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.out)).toEqual([view]);

    expect((await cli(['ip', 'unblock', '203.0.113.0/24'], env)).code).toBe(0);
    expect(JSON.parse((await cli(['ip', 'list'], env)).out)).toEqual([]);
  });

  it('refuses a malformed range and an unknown block with exit 1', async () => {
    const bad = await cli(['ip', 'block', '300.1.2.3'], env);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(
      /^svc: "300\.1\.2\.3" is not an IP address or CIDR range.*\(VALIDATION\)\n$/,
    );
    const missing = await cli(['ip', 'unblock', '198.51.100.0/24'], env);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/not found \(NOT_FOUND\)/);
  });

  it('exits 2 with the variable named when the configuration is bad', async () => {
    const run = await cli(['ip', 'list'], { ...env, SVC_DATABASE_POOL_SIZE: 'many' });
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/^svc: invalid configuration:\n {2}SVC_DATABASE_POOL_SIZE: expected/);
  });
});

describe('pending migrations', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase();
    env = { ...database.env, SVC_LOG_LEVEL: 'warn' };
  });
  afterAll(async () => database?.drop());

  it('are refused by every command but migrate and serve, which apply them', async () => {
    const n = Object.keys(migrations).length;
    for (const argv of [
      ['ip', 'list'],
      ['audit', 'list'],
      ['operator', 'grant', 'alice'],
    ]) {
      const refused = await cli(argv, env);
      expect(refused).toMatchObject({
        code: 1,
        out: '',
        err: `svc: the database has ${n} pending migrations; run \`svc migrate\` (or start the server) first\n`,
      });
    }
    expect(await cli(['migrate'], env)).toMatchObject({ code: 0 });
    expect(await cli(['ip', 'list'], env)).toMatchObject({ code: 0, out: '[]\n' });
  });

  it('are applied by the server at boot', async () => {
    const fresh = await createTestDatabase();
    const server = await startTestServer({ database: fresh });
    try {
      expect(await pendingMigrations(server.ctx.db)).toEqual([]);
      expect(server.logs.find('migrations applied')?.migrations).toEqual(Object.keys(migrations));
    } finally {
      await server.stop();
      await fresh.drop();
    }
  });
});

describe('the svc binary', () => {
  // The real entry point in a child process, through tsx (no build needed) ...
  const viaTsx = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'src/cli/index.ts'), ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 80_000,
    });

  it('prints help and exits 0', { timeout: 90_000 }, () => {
    const run = viaTsx(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: svc [options] [command]');
  });

  it(
    'stops `serve` on a bad variable with one message and a non-zero exit',
    { timeout: 90_000 },
    () => {
      const run = viaTsx(['serve'], {
        SVC_ROLE: 'hub',
        SVC_DATA_DIR: '/nonexistent/never-created',
      });
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        'svc: invalid configuration:\n  SVC_ROLE: expected one of relay, host, both, got "hub"\n',
      );
    },
  );

  // ... and the package bin as installed, once `npm run build` has made dist/ (CI builds first).
  it.runIf(fs.existsSync(path.join(root, 'dist/cli/index.js')))(
    'runs as bin/svc.js',
    { timeout: 60_000 },
    () => {
      const run = spawnSync(process.execPath, [path.join(root, 'bin/svc.js'), '--version'], {
        cwd: root,
        encoding: 'utf8',
        timeout: 50_000,
      });
      expect(run.status).toBe(0);
      expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    },
  );
});
