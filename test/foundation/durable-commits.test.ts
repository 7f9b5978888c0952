import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';

import type { Db } from '../../src/db/database.js';
import { openDatabase } from '../../src/db/open.js';
import { dependencyError } from '../../src/errors.js';
import { TEST_DB } from '../_util/app.js';

/** A flush held until released: the disk made slow on purpose. */
class Latch {
  private readonly waiting: Array<() => void> = [];
  held = true;
  entered = 0;
  wait = async (): Promise<void> => {
    this.entered += 1;
    if (this.held) await new Promise<void>((r) => this.waiting.push(r));
  };
  release(): void {
    this.held = false;
    for (const r of this.waiting.splice(0)) r();
  }
}

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  // Several turns of the loop, with I/O between them: a flush that did not wait would be over.
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 10));
  return done;
};

// SQLite only: the server's commits wait for the disk on libuv's thread pool (durable-commits.ts).
describe.skipIf(TEST_DB !== 'sqlite')('commits flushed off the event loop', () => {
  let db: Db | null = null;
  let dir = '';

  const open = async (opts: { flushOffLoop?: boolean; beforeFlush?: () => Promise<void> }) => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-flush-'));
    db = openDatabase({ url: null, dataDir: dir, ...opts });
    await sql`create table t (id integer primary key, v text)`.execute(db.kysely);
    return db;
  };

  afterEach(async () => {
    await db?.close();
    db = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const insert = (d: Db, v: string) =>
    d.transaction(async (tx) => {
      await sql`insert into t (v) values (${v})`.execute(tx.db);
    });
  const count = async (d: Db) =>
    Number((await sql<{ n: number }>`select count(*) as n from t`.execute(d.kysely)).rows[0]!.n);

  it('acknowledges a commit only after its flush; reads go on meanwhile, the next group after it', async () => {
    let hook = async () => {};
    const d = await open({ flushOffLoop: true, beforeFlush: () => hook() });
    await insert(d, 'before');
    const flushes = d.walFlusher!.flushes;

    const slow = new Latch();
    hook = slow.wait;
    const first = insert(d, 'first');
    // The loop is free (these timers run) while the commit waits for the disk...
    expect(await settled(first)).toBe(false);
    expect(slow.entered).toBe(1);
    // ...and so is the connection: a read is answered. The next transaction gathers with those
    // that arrive during the flush, and is acknowledged by a flush that starts after it.
    expect(await count(d)).toBe(2);
    // What reads see is not yet on the disk: answers wait for `durable()`.
    const durable = d.durable();
    expect(durable).not.toBeNull();
    const order: string[] = [];
    const second = insert(d, 'second').then(() => order.push('second'));
    void first.then(() => order.push('first'));
    expect(await settled(second)).toBe(false);
    expect(slow.entered).toBe(1);
    slow.release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
    expect(slow.entered).toBe(2);
    expect(d.walFlusher!.flushes).toBe(flushes + 2);
    await durable;
    expect(d.durable()).toBeNull();
    expect(await count(d)).toBe(3);
  });

  it("leaves only the group commit's own COMMIT to it: any other write waits for its flush", async () => {
    let hook = async () => {};
    const d = await open({ flushOffLoop: true, beforeFlush: () => hook() });
    const slow = new Latch();
    hook = slow.wait;
    // A write outside a transaction that runs while group commit is in its COMMIT step (the
    // connection changes hands there) is not the group's: its own answer waits for the disk.
    let rootWrite: Promise<unknown> = Promise.resolve();
    const committing = d.walFlusher!.commitThenFlush(async () => {
      rootWrite = sql`insert into t (v) values ('outside')`.execute(d.kysely);
      await rootWrite;
    });
    expect(await settled(rootWrite)).toBe(false);
    expect(slow.entered).toBe(1);
    slow.release();
    await rootWrite;
    await (
      await committing
    ).flushed;
    expect(await count(d)).toBe(1);
  });

  it('flushes once per group of commits and once per write outside a transaction, never for reads', async () => {
    const d = await open({ flushOffLoop: true });
    const f0 = d.walFlusher!.flushes;
    await Promise.all(Array.from({ length: 20 }, (_, i) => insert(d, `g${i}`)));
    expect(d.groupCommitter!.lastGroupSize).toBe(20);
    expect(d.walFlusher!.flushes).toBe(f0 + 1);
    await count(d);
    await d.transaction(async (tx) => sql`select * from t`.execute(tx.db));
    expect(d.walFlusher!.flushes).toBe(f0 + 1);
    await sql`insert into t (v) values ('root')`.execute(d.kysely);
    expect(d.walFlusher!.flushes).toBe(f0 + 2);
    expect(await count(d)).toBe(21);
  });

  it('runs the connection with synchronous=NORMAL only when it flushes itself (the CLI keeps FULL)', async () => {
    const own = await open({ flushOffLoop: true });
    const mode = async (d: Db) =>
      (await sql<{ synchronous: number }>`pragma synchronous`.execute(d.kysely)).rows[0]!
        .synchronous;
    expect(await mode(own)).toBe(1);
    await own.close();
    db = openDatabase({ url: null, dataDir: dir });
    expect(db.walFlusher).toBeNull();
    expect(await mode(db)).toBe(2);
  });

  it('fails a commit whose flush fails, as a disk error, and commits again once the disk works', async () => {
    let fail = false;
    const d = await open({
      flushOffLoop: true,
      beforeFlush: async () => {
        if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      },
    });
    fail = true;
    const err = await insert(d, 'x').then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'SQLITE_IOERR_FSYNC' });
    expect(dependencyError(err)).toMatchObject({ code: 'UNAVAILABLE', dependency: 'disk' });
    fail = false;
    await insert(d, 'y');
    expect(await count(d)).toBeGreaterThanOrEqual(1);
  });
});
