import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  createTestApp,
  TEST_DB,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { sleep } from '../_util/fault-proxy.js';
import { signUpAndIn } from '../_util/seed.js';

const CREATE = 'mutation($n: String!) { createWorkspace(input: { name: $n }) { id } }';

/**
 * A data directory on a small file system of its own (tmpfs; mounting needs root), so the test
 * can fill it up for real; the reason instead where mounting is not permitted.
 */
function smallFileSystem(sizeMb: number): { dir: string } | { skip: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], {
      stdio: 'pipe',
    });
    return { dir };
  } catch (err) {
    fs.rmdirSync(dir);
    return { skip: `cannot mount a tmpfs (needs root): ${(err as Error).message.split('\n')[0]}` };
  }
}

/** Writes a file until the file system is full; returns its path. */
function fillUp(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(16 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  // The last bytes that fit.
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(512, 1));
  } catch {
    // full
  }
  fs.closeSync(fd);
  return file;
}

const fsys = TEST_DB === 'sqlite' ? smallFileSystem(8) : { skip: 'SQLite only' };
// The reason for a skip is part of the suite's name, so the test report shows it.
const title =
  'skip' in fsys ? `SQLite on a full disk (skipped: ${fsys.skip})` : 'SQLite on a full disk';

describe.skipIf('skip' in fsys)(title, () => {
  const dir = 'dir' in fsys ? fsys.dir : '';
  const database: TestDatabase = {
    env: { SVC_DATA_DIR: dir },
    dataDir: dir,
    drop: async () => {},
  };
  const env = { SVC_DATA_MIN_FREE_MB: '0', SVC_LIMIT_WORKSPACES_PER_USER: '0' };
  let t: TestApp;
  let agent: Agent;

  beforeAll(async () => {
    t = await createTestApp({ database, env });
    agent = await signUpAndIn(t);
  });

  afterAll(async () => {
    await t?.close();
    try {
      execFileSync('umount', [dir], { stdio: 'pipe' });
    } catch {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers UNAVAILABLE with the cause logged, loses nothing acknowledged, and recovers', async () => {
    const acknowledged: string[] = [];
    const record = (res: Awaited<ReturnType<TestApp['gql']>>) => {
      const id = res.body.data?.createWorkspace?.id as string | undefined;
      if (id) acknowledged.push(id);
      return res;
    };
    // Some writes before, under load.
    for (const res of await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.gql(CREATE, { n: `before ${i}` }, agent)),
    ))
      expect(record(res).body.errors).toBeUndefined();

    const filler = fillUp(dir);
    const codes = new Set<string>();
    for (let round = 0; round < 50 && !codes.has('UNAVAILABLE'); round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => t.gql(CREATE, { n: `full ${round}.${i}` }, agent)),
      );
      for (const res of answers) {
        record(res);
        for (const e of res.body.errors ?? []) codes.add(String(e.extensions?.code));
      }
    }
    expect([...codes]).toEqual(['UNAVAILABLE']);
    const warning = t.logs.lines.find((l) => l.msg === 'disk failed');
    expect(warning).toMatchObject({ cause: { code: 'SQLITE_FULL' } });
    expect(JSON.stringify(t.logs.lines)).not.toMatch(/cannot rollback/);

    const ready = await t.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.database).toMatchObject({
      status: 'fail',
      reason: expect.stringMatching(/disk is full/),
    });
    expect((await t.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    // Space freed: writes work again, without a restart.
    fs.rmSync(filler);
    const again = await t.gql(CREATE, { n: 'after' }, agent);
    expect(record(again).body.errors).toBeUndefined();
    await sleep(1100); // readiness results are reused for one second
    expect((await t.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    // Every acknowledged write is there after a restart on the same files.
    await t.close();
    t = await createTestApp({ database, env });
    const rows = await t.ctx.db.kysely
      .selectFrom('workspace')
      .select('id')
      .where('id', 'in', acknowledged)
      .execute();
    expect(rows.length).toBe(acknowledged.length);
  });
});
