import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

import { cli } from '../cli/cli-io.js';
import { createTestDatabase, TEST_DB, type TestDatabase } from '../_util/app.js';

const root = path.resolve(import.meta.dirname, '../..');
const PASSWORD = 'shutdown test password';

/** A `svc serve` child process and the JSON log lines it printed so far. */
function spawnServer(env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'src/cli/index.ts'), 'serve'],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', SVC_SERVER_PORT: '0', SVC_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: Record<string, unknown>[] = [];
  let stderr = '';
  let buffered = '';
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part));
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w();
      resolve({ code, signal });
    }),
  );
  /** Resolves with the first log line with this message (the deadline is the test timeout). */
  const line = async (msg: string): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = lines.find((l) => l.msg === msg);
      if (found) return found;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`server exited before logging "${msg}": ${stderr}`);
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { child, lines, line, exited, stderr: () => stderr };
}

describe('graceful shutdown', () => {
  let database: TestDatabase;
  let child: ChildProcess | null = null;
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await database?.drop();
  });

  // A real process started through tsx: allow for a slow start on a busy machine.
  it('finishes an in-flight request on SIGTERM, closes the database and exits 0', async () => {
    database = await createTestDatabase();
    expect((await cli(['migrate'], database.env)).code).toBe(0);
    const created = await cli(
      ['account', 'create', 'dora', '--password-stdin'],
      database.env,
      PASSWORD,
    );
    expect(created.code).toBe(0);

    const server = spawnServer({ ...database.env, SVC_LOG_LEVLE: 'debug' });
    child = server.child;
    const listening = await server.line('listening');
    const port = (listening.address as { port: number }).port;
    // No NODE_ENV in its environment: the binary runs its dependencies in production mode.
    expect(listening.nodeEnv).toBe('production');
    expect((await server.line('unknown SVC_* variables are ignored')).variables).toEqual([
      'SVC_LOG_LEVLE',
    ]);

    // A login (it hashes a password and writes a session) whose headers the server has read:
    // `Expect: 100-continue` makes it say so before the body is sent.
    const body = JSON.stringify({
      query:
        'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }',
      variables: { u: 'dora', p: PASSWORD },
    });
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
    });
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      request.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      request.on('error', reject);
    });
    await new Promise<void>((resolve) => request.on('continue', () => resolve()));

    child.kill('SIGTERM');
    await server.line('shutting down');
    // No new connection is accepted any more ...
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    // ... but the request in flight still runs to the end.
    request.end(body);
    const answer = await response;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).data.login.csrfToken).toEqual(expect.any(String));

    const exit = await server.exited;
    expect(server.stderr()).toBe('');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(server.lines.some((l) => l.msg === 'signal received' && l.signal === 'SIGTERM')).toBe(
      true,
    );

    // The session the login wrote is there, and the database was closed cleanly.
    if (TEST_DB === 'sqlite') {
      const file = path.join(database.dataDir, 'svc.sqlite');
      // The last connection to close checkpoints the WAL into the database and removes it.
      expect(fs.existsSync(`${file}-wal`)).toBe(false);
      const sqlite = new Sqlite(file, { readonly: true });
      try {
        expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(sqlite.prepare('select count(*) as n from session').get()).toEqual({ n: 1 });
      } finally {
        sqlite.close();
      }
    } else {
      const client = new pg.Client({ connectionString: database.env.SVC_DATABASE_URL });
      await client.connect();
      try {
        const { rows } = await client.query('select count(*)::int as n from session');
        expect(rows[0].n).toBe(1);
      } finally {
        await client.end();
      }
    }
  }, 120_000);

  it('keeps the NODE_ENV the operator set', async () => {
    const server = spawnServer({ ...database.env, NODE_ENV: 'development' });
    child = server.child;
    expect((await server.line('listening')).nodeEnv).toBe('development');
    child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});
