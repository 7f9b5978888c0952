import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { AppContext, ContextOverrides } from '../../src/context.js';
import type { BusEvent } from '../../src/events/bus.js';
import { namedStatements } from '../../src/db/statements/prepared.js';
import { Outbox } from '../../src/events/outbox.js';
import { insertOutboxRows } from '../../src/events/queries.js';
import { emit } from '../../src/events/publish.js';
import { RedisBus, whenSubscribed } from '../../src/events/redis-bus.js';
import { newId } from '../../src/lib/ids.js';
import { FaultProxy, sleep } from '../_util/fault-proxy.js';
import { redisTestPrefix } from '../_util/redis.js';
import {
  createMigratedContext,
  createTestDatabase,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';
import { recordQueries } from '../conversations/_helpers.js';
import { until } from '../realtime/_helpers.js';

// The transactional outbox (docs/events.md, "Delivery"), driven on the contexts themselves.

const quiet = pino({ level: 'silent' });

async function context(
  database: TestDatabase,
  overrides: Partial<ContextOverrides> = {},
  env: Record<string, string> = {},
): Promise<AppContext> {
  return createMigratedContext(database, env, {
    checkTransactions: true,
    log: quiet,
    noJobs: true,
    ...overrides,
    // These tests are about the rows: a server on the in-process bus writes none (below).
    outbox: { keepRows: true, ...overrides.outbox },
  });
}

/** Everything published on `topic` of the context's bus, as it arrives. */
function listen(ctx: AppContext, topic: string): BusEvent[] {
  const seen: BusEvent[] = [];
  ctx.bus.subscribe(topic, (e) => seen.push(e));
  return seen;
}

const rowsOf = async (ctx: AppContext) =>
  ctx.db.kysely.selectFrom('event_outbox').selectAll().orderBy('id').execute();

function event(topic: string, n: number): BusEvent {
  return { topic, type: 'WorkspaceUpdated', at: Date.now(), payload: { n } };
}

/** An outbox row as a process that is gone would have left it. */
function leftRow(topic: string, n: number, origin: string | null, createdAt: number) {
  return {
    id: newId(),
    topic,
    type: 'WorkspaceUpdated',
    at: createdAt,
    payload: JSON.stringify({ n }),
    origin,
    createdAt,
  };
}

describe('the event outbox', () => {
  let database: TestDatabase;
  let ctx: AppContext;
  beforeAll(async () => {
    database = await createTestDatabase();
    // The drainer does not run on its own here: each test calls drain().
    ctx = await context(database, { outbox: { drainIntervalMs: 3_600_000, graceMs: 5_000 } });
  });
  afterAll(async () => {
    await ctx?.close();
    await database?.drop();
  });

  it('publishes after commit, in order, and removes the rows it delivered', async () => {
    const topic = `test:${newId()}`;
    const seen = listen(ctx, topic);
    await ctx.db.transaction(async (tx) => {
      ctx.outbox.publishOnCommit(tx, event(topic, 1));
      emit(tx, ctx.outbox, topic, 'WorkspaceUpdated', Date.now(), {
        audience: { kind: 'workspace' },
        serverId: 'w',
        updatedBy: 'u',
        name: 'n',
      });
      // Written just before the commit, not yet published.
      expect(seen).toEqual([]);
    });
    // Published by the time the transaction's promise settles (today's fast path).
    expect(seen.map((e) => e.payload.n ?? e.payload.name)).toEqual([1, 'n']);
    await ctx.outbox.flush();
    expect(await rowsOf(ctx)).toEqual([]);
  });

  it('writes all events of a transaction in one statement', async () => {
    const topic = `test:${newId()}`;
    const seen = listen(ctx, topic);
    const cost = async (events: number) => {
      await ctx.outbox.flush();
      // Every statement, the outbox's own included (countQueries leaves those out).
      const texts = await recordQueries(() =>
        ctx.db.transaction(async (tx) => {
          await tx.db.selectFrom('event_outbox').select('id').limit(1).execute();
          for (let i = 0; i < events; i += 1) ctx.outbox.publishOnCommit(tx, event(topic, i));
        }),
      );
      return texts.length;
    };
    const none = await cost(0);
    const one = await cost(1);
    expect(one).toBe(none + 1);
    expect(await cost(40)).toBe(one);
    expect(seen).toHaveLength(41);
    await ctx.outbox.flush();
    expect(await rowsOf(ctx)).toEqual([]);
  });

  it.runIf(TEST_DB === 'postgres')(
    "writes a few events' rows as a named statement, whatever the rows hold",
    async () => {
      const topic = `test:${newId()}`;
      const seen = listen(ctx, topic);
      const texts = await recordQueries(() =>
        ctx.db.transaction(async (tx) => {
          for (let i = 0; i < 3; i += 1) ctx.outbox.publishOnCommit(tx, event(topic, i));
        }),
      );
      expect(seen).toHaveLength(3);
      expect(texts).toHaveLength(1);
      expect(texts[0]).toMatch(/^\/\* svc:deferred-writes \*\/ insert into "event_outbox"/);
      expect(namedStatements.has(texts[0]!)).toBe(true);
      await ctx.outbox.flush();
    },
  );

  it('removes the rows of events delivered close together in one statement', async () => {
    // Close together: within the removal's delay, long here so that a busy machine cannot spread
    // the ten transactions over two removals.
    const own = await context(database, {
      outbox: { drainIntervalMs: 3_600_000, graceMs: 5_000, removalDelayMs: 2_000 },
    });
    try {
      // Nothing of the shared context's left to remove meanwhile.
      await ctx.outbox.flush();
      const topic = `test:${newId()}`;
      const seen = listen(own, topic);
      const texts = await recordQueries(async () => {
        // One after another, each its own transaction and its own turn of the loop.
        for (let i = 0; i < 10; i += 1) {
          await own.db.transaction(async (tx) => own.outbox.publishOnCommit(tx, event(topic, i)));
        }
        await until(async () => (await rowsOf(own)).length === 0, 'rows removed');
      });
      expect(seen).toHaveLength(10);
      expect(texts.filter((s) => /^delete from "event_outbox"/.test(s))).toHaveLength(1);
    } finally {
      await own.close();
    }
  });

  it('writes the row in the transaction: a rollback publishes and leaves nothing', async () => {
    const topic = `test:${newId()}`;
    const seen = listen(ctx, topic);
    await expect(
      ctx.db.transaction(async (tx) => {
        ctx.outbox.publishOnCommit(tx, event(topic, 1));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // A rollback after the row was written (by a later step of the same transaction) too.
    await expect(
      ctx.db.transaction(async (tx) => {
        ctx.outbox.publishOnCommit(tx, event(topic, 2));
        tx.beforeCommit(async () => {
          throw new Error('failed before commit');
        });
      }),
    ).rejects.toThrow('failed before commit');
    await ctx.db.transaction(async (tx) => ctx.outbox.publishOnCommit(tx, event(topic, 3)));
    await ctx.outbox.flush();
    expect(await rowsOf(ctx)).toEqual([]);
    expect(await ctx.outbox.drain()).toBe(0);
    expect(seen.map((e) => e.payload.n)).toEqual([3]);
  });

  it('delivers once a row a crashed writer left, after the grace period, and removes it', async () => {
    const topic = `test:${newId()}`;
    const seen = listen(ctx, topic);
    const now = Date.now();
    await ctx.db.transaction((tx) =>
      insertOutboxRows(tx.db, [
        // Another process that publishes itself wrote this one a moment ago: not ours yet.
        leftRow(topic, 2, newId(), now),
        // Left by a writer that crashed between commit and publish.
        leftRow(topic, 1, newId(), now - 60_000),
      ]),
    );
    expect(await ctx.outbox.drain()).toBe(1);
    expect(seen.map((e) => e.payload.n)).toEqual([1]);
    expect((await rowsOf(ctx)).map((r) => JSON.parse(r.payload).n)).toEqual([2]);
    expect(await ctx.outbox.drain()).toBe(0);
    expect(seen).toHaveLength(1);
    await ctx.db.kysely.deleteFrom('event_outbox').execute();
  });

  it('delivers at once, oldest first, what the command line left for the servers', async () => {
    const topic = `test:${newId()}`;
    const seen = listen(ctx, topic);
    const now = Date.now();
    await ctx.db.transaction((tx) =>
      insertOutboxRows(tx.db, [leftRow(topic, 1, null, now), leftRow(topic, 2, null, now)]),
    );
    expect(await ctx.outbox.drain()).toBe(2);
    expect(seen.map((e) => e.payload.n)).toEqual([1, 2]);
    expect(await rowsOf(ctx)).toEqual([]);
  });

  it('leaves the rows of a command line without Redis to the drainer, which runs on its own', async () => {
    const topic = `test:${newId()}`;
    const server = await context(database, { outbox: { drainIntervalMs: 20 } });
    const cliContext = await context(database, { passive: true });
    try {
      const heard = listen(server, topic);
      await cliContext.db.transaction(async (tx) =>
        cliContext.outbox.publishOnCommit(tx, event(topic, 7)),
      );
      await cliContext.close();
      await until(() => heard.length === 1, 'the drained event');
      expect(heard[0]).toMatchObject({ topic, type: 'WorkspaceUpdated', payload: { n: 7 } });
      await until(async () => (await rowsOf(server)).length === 0, 'the row to be removed');
      expect(heard).toHaveLength(1);
    } finally {
      await cliContext.close();
      await server.close();
    }
  });
  describe('a write whose event stands only when it changed a row (publishIfChanged)', () => {
    const cidr = '203.0.113.0/24';
    /** Sets the block's reason; returns a row only when the reason was another. */
    const reword = (c: AppContext, reason: string) =>
      c.db.kysely
        .updateTable('ip_block')
        .set({ reason })
        .where('cidr', '=', cidr)
        .where('reason', '<>', reason)
        .returning('cidr')
        .compile();
    beforeAll(async () => {
      await ctx.db.kysely
        .insertInto('ip_block')
        .values({ cidr, reason: 'first', createdAt: 0, expiresAt: null, createdBy: 'cli' })
        .execute();
    });
    afterAll(async () => {
      await ctx.db.kysely.deleteFrom('ip_block').where('cidr', '=', cidr).execute();
    });

    it('publishes when the write changed a row, nothing when it did not; one statement on PostgreSQL', async () => {
      const topic = `test:${newId()}`;
      const seen = listen(ctx, topic);
      await ctx.outbox.flush();
      let changed: boolean[] = [];
      const texts = await recordQueries(async () => {
        changed.push(await ctx.outbox.publishIfChanged(reword(ctx, 'second'), event(topic, 1)));
      });
      expect(changed).toEqual([true]);
      expect(seen.map((e) => e.payload.n)).toEqual([1]);
      if (TEST_DB === 'postgres') expect(texts).toHaveLength(1);
      const reason = await ctx.db.kysely
        .selectFrom('ip_block')
        .select('reason')
        .where('cidr', '=', cidr)
        .executeTakeFirstOrThrow();
      expect(reason.reason).toBe('second');

      changed = [await ctx.outbox.publishIfChanged(reword(ctx, 'second'), event(topic, 2))];
      expect(changed).toEqual([false]);
      expect(seen).toHaveLength(1);
      await ctx.outbox.flush();
      expect(await rowsOf(ctx)).toEqual([]);
    });

    it("writes the event's row with the change, for the drainer when the writer cannot publish", async () => {
      const topic = `test:${newId()}`;
      const seen = listen(ctx, topic);
      const cliContext = await context(database, { passive: true });
      try {
        expect(
          await cliContext.outbox.publishIfChanged(reword(cliContext, 'third'), event(topic, 3)),
        ).toBe(true);
        expect(
          await cliContext.outbox.publishIfChanged(reword(cliContext, 'third'), event(topic, 4)),
        ).toBe(false);
      } finally {
        await cliContext.close();
      }
      const rows = (await rowsOf(ctx)).filter((r) => r.topic === topic);
      expect(rows.map((r) => [r.origin, JSON.parse(r.payload)])).toEqual([[null, { n: 3 }]]);
      expect(await ctx.outbox.drain()).toBe(1);
      expect(seen.map((e) => e.payload.n)).toEqual([3]);
    });
  });
});

describe('a server on the in-process bus', () => {
  it('publishes after commit, nothing on rollback, and writes no row', async () => {
    const database = await createTestDatabase();
    // The process holds every listener: no row is written for anyone else to drain.
    const ctx = await createMigratedContext(database, {}, { log: quiet, noJobs: true });
    try {
      const topic = `workspace:${newId()}`;
      const heard = listen(ctx, topic);
      let seenInside = -1;
      await ctx.db.transaction(async (tx) => {
        ctx.outbox.publishOnCommit(tx, event(topic, 1));
        tx.beforeCommit(async () => {
          seenInside = (await tx.db.selectFrom('event_outbox').select('id').execute()).length;
        });
      });
      await expect(
        ctx.db.transaction(async (tx) => {
          ctx.outbox.publishOnCommit(tx, event(topic, 2));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(seenInside).toBe(0);
      expect(heard.map((e) => e.payload.n)).toEqual([1]);
      expect(await rowsOf(ctx)).toEqual([]);
    } finally {
      await ctx.close();
      await database.drop();
    }
  });
});

describe('two servers draining one outbox', () => {
  let database: TestDatabase;
  const contexts: AppContext[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await database?.drop();
  });

  it('deliver each row once', async () => {
    const opts = { outbox: { drainIntervalMs: 3_600_000 } };
    const [a, b] = [await context(database, opts), await context(database, opts)];
    contexts.push(a!, b!);
    const topic = `test:${newId()}`;
    const heard = [listen(a!, topic), listen(b!, topic)];
    const now = Date.now();
    const rows = Array.from({ length: 1200 }, (_, i) => leftRow(topic, i, null, now));
    await a!.db.transaction((tx) => insertOutboxRows(tx.db, rows));
    const [na, nb] = await Promise.all([a!.outbox.drain(), b!.outbox.drain()]);
    expect(na + nb).toBe(1200);
    const delivered = [...heard[0]!, ...heard[1]!].map((e) => e.payload.n as number);
    expect(delivered).toHaveLength(1200);
    expect(new Set(delivered).size).toBe(1200);
    // Each drainer published its share in order.
    for (const list of heard) {
      const ns = list.map((e) => e.payload.n as number);
      expect(ns).toEqual([...ns].sort((x, y) => x - y));
    }
    expect(await rowsOf(a!)).toEqual([]);
  });
});

describe.runIf(process.env.SVC_TEST_REDIS_URL)('draining through Redis', () => {
  it('publishes a claimed batch in order and removes it', async () => {
    const database = await createTestDatabase();
    const prefix = `svc-test-${newId()}:`;
    const ctx = await context(
      database,
      { outbox: { drainIntervalMs: 3_600_000 } },
      { SVC_REDIS_URL: process.env.SVC_TEST_REDIS_URL!, SVC_REDIS_PREFIX: prefix },
    );
    try {
      const topic = `test:${newId()}`;
      const seen = listen(ctx, topic);
      await whenSubscribed(ctx.bus, topic);
      const now = Date.now();
      const rows = Array.from({ length: 700 }, (_, i) => leftRow(topic, i, null, now));
      await ctx.db.transaction((tx) => insertOutboxRows(tx.db, rows));
      expect(await ctx.outbox.drain()).toBe(700);
      await until(() => seen.length === 700, 'the events back from Redis');
      expect(seen.map((e) => e.payload.n)).toEqual(rows.map((_, i) => i));
      expect(await rowsOf(ctx)).toEqual([]);
    } finally {
      await ctx.close();
      await database.drop();
    }
  });
});

describe.runIf(process.env.SVC_TEST_REDIS_URL)('an outbox whose Redis goes away', () => {
  const redisUrl = process.env.SVC_TEST_REDIS_URL!;
  const grace = 1_000;
  const outbox = { drainIntervalMs: 3_600_000, graceMs: grace };
  let database: TestDatabase;
  let proxy: FaultProxy;
  let prefix: string;
  // `writer` reaches Redis through the proxy; `drainer` stands for another server process.
  let writer: AppContext;
  let drainer: AppContext;
  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(redisUrl);
    proxy = await FaultProxy.start(target.hostname, Number(target.port || 6379));
    prefix = redisTestPrefix();
    writer = await context(
      database,
      { outbox },
      {
        SVC_REDIS_URL: proxy.rewrite(redisUrl),
        SVC_REDIS_PREFIX: prefix,
        SVC_REDIS_TIMEOUT_MS: '300',
      },
    );
    drainer = await context(
      database,
      { outbox },
      { SVC_REDIS_URL: redisUrl, SVC_REDIS_PREFIX: prefix },
    );
  });
  afterEach(async () => {
    await proxy.pass();
    await until(() => writer.bus.reachable(), 'the writer back on Redis');
    await writer.outbox.flush();
    await drainer.db.kysely.deleteFrom('event_outbox').execute();
  });
  afterAll(async () => {
    await writer?.close();
    await drainer?.close();
    await proxy?.close();
    await database?.drop();
  });

  /** What reaches `topic` on the drainer's process, resync signals included, in order. */
  async function heard(topic: string): Promise<Array<number | 'resync'>> {
    const seen: Array<number | 'resync'> = [];
    drainer.bus.subscribe(topic, (e) => seen.push(e.payload.n as number));
    drainer.bus.onResync((topics) => {
      if (topics?.includes(topic)) seen.push('resync');
    });
    await whenSubscribed(drainer.bus, topic);
    return seen;
  }

  async function cut(): Promise<void> {
    await proxy.refuse();
    await until(() => !writer.bus.reachable(), 'the writer cut off from Redis');
  }

  const send = (topic: string, n: number) =>
    writer.db.transaction(async (tx) => writer.outbox.publishOnCommit(tx, event(topic, n)));

  it('keeps the row of an event held while Redis is away, and removes it once Redis has it', async () => {
    const topic = `test:${newId()}`;
    const seen = await heard(topic);
    await cut();
    // The transaction settles without Redis: nothing it answers waits for the publish.
    await send(topic, 1);
    await sleep(300);
    const rows = await rowsOf(drainer);
    expect(rows.map((r) => [r.topic, r.origin])).toEqual([[topic, writer.outbox.origin]]);
    await proxy.pass();
    await until(() => seen.length === 1, 'the held event');
    await until(async () => (await rowsOf(drainer)).length === 0, 'the row removed');
    expect(seen).toEqual([1]);
  });

  it("has another process publish a cut-off writer's rows in order after the grace period, then tell their subscribers to resync", async () => {
    const topic = `test:${newId()}`;
    const seen = await heard(topic);
    await cut();
    for (const n of [1, 2, 3]) await send(topic, n);
    // The writer's own drainer cannot publish either: it leaves the rows to others.
    await sleep(grace + 100);
    expect(await writer.outbox.drain()).toBe(0);
    expect((await rowsOf(drainer)).map((r) => r.origin)).toEqual(
      Array(3).fill(writer.outbox.origin),
    );
    expect(await drainer.outbox.drain()).toBe(3);
    await until(() => seen.length === 4, 'the events and the resync signal');
    expect(seen).toEqual([1, 2, 3, 'resync']);
    expect(await rowsOf(drainer)).toEqual([]);
    // The writer publishes what it held once it is back: at least once.
    await proxy.pass();
    await until(() => seen.length === 7, 'the held events again');
    expect(seen.slice(4)).toEqual([1, 2, 3]);
  });

  it('publishes without a resync signal the rows nobody was to publish (the command line)', async () => {
    const topic = `test:${newId()}`;
    const seen = await heard(topic);
    const now = Date.now();
    await drainer.db.transaction((tx) =>
      insertOutboxRows(tx.db, [leftRow(topic, 1, null, now), leftRow(topic, 2, null, now)]),
    );
    expect(await drainer.outbox.drain()).toBe(2);
    await until(() => seen.length === 2, 'the events');
    await drainer.bus.publish(event(topic, 3));
    await until(() => seen.length === 3, 'the next event');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('keeps the row of an event its bus refused to hold, for its own drainer once Redis is back', async () => {
    const topic = `test:${newId()}`;
    const seen = await heard(topic);
    const bus = await RedisBus.connect({
      url: proxy.rewrite(redisUrl),
      prefix,
      log: quiet,
      timeoutMs: 300,
      maxHeld: 1,
    });
    const own = new Outbox({
      db: drainer.db,
      bus,
      log: quiet,
      reachesListeners: true,
      keepRows: true,
      ...outbox,
    });
    try {
      await proxy.refuse();
      await until(() => !bus.reachable(), 'the bus cut off');
      for (const n of [1, 2]) {
        await drainer.db.transaction(async (tx) => own.publishOnCommit(tx, event(topic, n)));
      }
      await proxy.pass();
      await until(() => seen.length === 1, 'the held event');
      await own.flush();
      // The refused event's row is still there, and nobody else took it over yet.
      expect((await rowsOf(drainer)).map((r) => JSON.parse(r.payload).n)).toEqual([2]);
      await sleep(grace + 100);
      await until(() => bus.reachable(), 'the bus back');
      expect(await own.drain()).toBe(1);
      await until(() => seen.length === 3, 'the refused event and the resync signal');
      expect(seen).toEqual([1, 2, 'resync']);
      expect(await rowsOf(drainer)).toEqual([]);
    } finally {
      await own.close();
      await bus.close();
    }
  });
});
