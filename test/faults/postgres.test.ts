import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import {
  agentHeaders,
  createTestApp,
  createTestDatabase,
  startTestServer,
  PG_URL,
  TEST_DB,
  type Agent,
  type TestApp,
  type TestDatabase,
} from '../_util/app.js';
import { FaultProxy, sleep } from '../_util/fault-proxy.js';
import { DEFAULT_PASSWORD, signUpAndIn } from '../_util/seed.js';
import { cookieHeader, upgradeAnswer } from '../realtime/_helpers.js';

const ME = '{ me { id username } }';
const CREATE = 'mutation($n: String!) { createWorkspace(input: { name: $n }) { id } }';
const LOGIN =
  'mutation($u: String!, $p: String!) { login(input: { username: $u, password: $p }) { csrfToken } }';

// The contract's bounds: a request that needs a failed dependency answers within 5 s, /readyz
// within 2 s. Measured with generous slack only for the test machine, never tightened.
const REQUEST_BOUND_MS = 5000;
const READY_BOUND_MS = 2000;

describe.skipIf(TEST_DB !== 'postgres')('PostgreSQL failures', () => {
  let proxy: FaultProxy;
  let database: TestDatabase;
  let t: TestApp;
  let agent: Agent;
  let admin: pg.Client;
  // A listening server on the same database, for the WebSocket upgrade.
  let server: Awaited<ReturnType<typeof startTestServer>>;

  beforeAll(async () => {
    const target = new URL(PG_URL);
    proxy = await FaultProxy.start(target.hostname, Number(target.port || 5432));
    database = await createTestDatabase();
    database.env.SVC_DATABASE_URL = proxy.rewrite(database.env.SVC_DATABASE_URL!);
    t = await createTestApp({
      database,
      env: { SVC_DATABASE_POOL_SIZE: '4' },
      // A plain route (as the file routes are) that needs the database.
      http: {
        apiRoutes: [
          (api, ctx, guards) =>
            api.get('/test-plain', { preHandler: [guards.session] }, async () => {
              await ctx.db.kysely.selectFrom('instance').select('id').execute();
              return { ok: true };
            }),
        ],
      },
    });
    agent = await signUpAndIn(t);
    server = await startTestServer({ database });
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  });

  afterEach(async () => {
    await proxy.pass();
  });

  afterAll(async () => {
    await admin?.end();
    await proxy?.pass();
    await server?.stop();
    await t?.close();
    await database?.drop();
    await proxy?.close();
  });

  /** Requests keep working (the pool refilled) once the path is back. */
  async function expectRecovered(): Promise<void> {
    let last: unknown;
    for (let i = 0; i < 50; i++) {
      const res = await t.gql(ME, {}, agent);
      if (res.body.data?.me?.id === agent.id) return;
      last = res.body;
      await sleep(100);
    }
    throw new Error(`no recovery: ${JSON.stringify(last)}`);
  }

  /** Statements in flight on every pooled connection (pg_sleep holds them). */
  /** Waits until `n` of the server's connections run pg_sleep (a busy machine is slow to start them). */
  async function sleepersRunning(n: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
         where application_name = $1 and state = 'active' and query like '%pg_sleep%'`,
        [`svc:${database.pgSchema}`],
      );
      if (rows[0]!.n >= n) return;
      await sleep(25);
    }
    throw new Error(`${n} sleeping statements never ran`);
  }

  function busyConnections(n: number, seconds = 2): Array<Promise<unknown>> {
    return Array.from({ length: n }, () =>
      sql`select pg_sleep(${seconds})`.execute(t.ctx.db.kysely).then(
        () => 'ok',
        (err: unknown) => err,
      ),
    );
  }

  it('survives connections reset while queries run, and recovers', async () => {
    const inFlight = [
      ...busyConnections(4),
      ...Array.from({ length: 8 }, () => t.gql(ME, {}, agent)),
    ];
    await sleepersRunning(4);
    proxy.reset();
    const outcomes = await Promise.all(inFlight);
    // The statements on the reset connections failed; the process did not end (an unhandled
    // 'error' event would have failed this file).
    expect(outcomes.slice(0, 4).every((o) => o instanceof Error)).toBe(true);
    for (const res of outcomes.slice(4) as Array<Awaited<ReturnType<TestApp['gql']>>>) {
      expect(res.status).toBe(200);
      if (res.body.errors) expect(res.body.errors[0]?.extensions?.code).toBe('UNAVAILABLE');
    }
    await expectRecovered();
  });

  it('survives pg_terminate_backend of its connections under load, and recovers', async () => {
    const inFlight = busyConnections(4);
    await sleepersRunning(4);
    const { rows } = await admin.query<{ n: number }>(
      `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
       where application_name = $1`,
      [`svc:${database.pgSchema}`],
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
    const outcomes = await Promise.all(inFlight);
    expect(outcomes.some((o) => o instanceof Error)).toBe(true);
    const messages = outcomes.map((o) => (o instanceof Error ? o.message : String(o)));
    expect(messages.join('\n')).toMatch(/terminat/i);
    await expectRecovered();
    // Writes too.
    const res = await t.gql(CREATE, { n: 'after terminate' }, agent);
    expect(res.body.errors).toBeUndefined();
  });

  it('answers UNAVAILABLE within 5 s while PostgreSQL refuses connections', async () => {
    await proxy.refuse();
    const started = Date.now();
    const [me, login, write] = await Promise.all([
      t.gql(ME, {}, agent),
      t.gql(LOGIN, { u: agent.username, p: DEFAULT_PASSWORD }),
      t.gql(CREATE, { n: 'while refused' }, agent),
    ]);
    expect(Date.now() - started).toBeLessThan(REQUEST_BOUND_MS);
    for (const res of [me, login, write]) {
      // A GraphQL answer, not an HTTP 500, and not an anonymous run.
      expect(res.status).toBe(200);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
      expect(res.body.errors?.[0]?.extensions?.request_id).toEqual(expect.any(String));
    }
    expect(t.logs.lines.some((l) => l.msg === 'database failed')).toBe(true);

    // Plain routes: 503 {"error"} with Retry-After.
    const plain = await t.inject({
      method: 'GET',
      url: '/api/test-plain',
      headers: agentHeaders(agent),
    });
    expect(plain.statusCode).toBe(503);
    expect(plain.headers['retry-after']).toBe('5');
    expect(plain.json()).toEqual({ error: expect.any(String) });

    // The WebSocket upgrade, whose session lookup needs the database: 503, not 500.
    const upgrade = await upgradeAnswer(server.address.port, {
      cookie: cookieHeader(agent),
      'Sec-WebSocket-Protocol': 'graphql-transport-ws',
    });
    expect(upgrade.status).toBe(503);
    expect(upgrade.headers).toMatch(/^Retry-After: 5$/im);

    const readyStarted = Date.now();
    const ready = await t.inject({ method: 'GET', url: '/readyz' });
    expect(Date.now() - readyStarted).toBeLessThan(READY_BOUND_MS);
    expect(ready.statusCode).toBe(503);
    const body = ready.json();
    expect(body.checks.database.status).toBe('fail');
    expect(body.checks.database.reason).toMatch(/ECONNREFUSED|database/);
    expect((await t.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    // A job that needs the database fails that round only.
    expect(await t.ctx.scheduler.runOnce('registration-prune').catch(() => 'threw')).toBe(false);

    await proxy.pass();
    await expectRecovered();
    expect(await t.ctx.scheduler.runOnce('registration-prune')).toBe(true);
    await sleep(1100); // readiness results are reused for one second
    expect((await t.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('answers TIMEOUT within 5 s while the path to PostgreSQL stalls', async () => {
    // Open connections stall mid-statement, new ones never finish connecting.
    await t.gql(ME, {}, agent);
    proxy.stall();
    const started = Date.now();
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => t.gql(ME, {}, agent)),
      t.gql(CREATE, { n: 'while stalled' }, agent),
    ]);
    expect(Date.now() - started).toBeLessThan(REQUEST_BOUND_MS);
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body.errors?.[0]?.extensions?.code).toBe('TIMEOUT');
    }

    const readyStarted = Date.now();
    await sleep(1100);
    const ready = await t.inject({ method: 'GET', url: '/readyz' });
    expect(Date.now() - readyStarted - 1100).toBeLessThan(READY_BOUND_MS);
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.database.status).toBe('fail');

    await proxy.pass();
    await expectRecovered();
  });
});
