import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { AppContext } from '../../src/context.js';
import {
  createMigratedContext,
  createTestDatabase,
  TEST_DB,
  type TestDatabase,
} from '../_util/app.js';
import { FaultProxy, sleep } from '../_util/fault-proxy.js';
import { redisTestPrefix } from '../_util/redis.js';
import {
  clientOn,
  freePort,
  gql,
  login,
  PASSWORD,
  ServerProcess,
  type Session,
} from '../_util/server-process.js';
import { until, WORKSPACE_EVENTS } from '../realtime/_helpers.js';

// docs/failures.md, "Events during a Redis outage": two real server processes on one PostgreSQL
// and one Redis, each reaching Redis through a proxy the test cuts. Two people send through
// process A, three watch on process B. Whatever is cut (A's path, B's, both; reset and refused,
// or stalled), and when A is killed during the cut, every acknowledged message reaches every
// watcher live, or the watcher's subscription ends (`complete`) after it, and is renewed, as the
// web client does (web/e2e/resync.e2e.ts). How long a send takes while Redis is cut is measured
// by the bench (`redis-outage`), not here.

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
/** How long each cut lasts; longer than the grace period, so B's drainer takes A's rows over. */
const CUT_MS = 3_000;
const GRACE_MS = 2_000;

const SEND = `mutation($c: ID!, $t: String!) {
  sendMessage(input: { conversationId: $c, text: $t }) { id }
}`;

interface Acked {
  id: string;
  text: string;
  at: number;
}

/** Sends one message after the other through `server` until stopped; keeps what was answered. */
class Sender {
  readonly acked: Acked[] = [];
  /** Answers that were errors (a 5xx, a GraphQL error): none is acceptable. */
  readonly refused: string[] = [];
  /** Requests the network cut off (the process was killed under them): never acknowledged. */
  cutOff = 0;
  private stopped = false;
  private readonly loop: Promise<void>;
  /** The number the next message carries (its text is `<name>#<seq>`). */
  seq = 0;

  constructor(
    server: ServerProcess,
    session: Session,
    conversationId: string,
    readonly name: string,
    first: number,
  ) {
    this.seq = first;
    this.loop = (async () => {
      for (; !this.stopped; this.seq += 1) {
        const text = `${name}#${this.seq}`;
        try {
          const res = await gql(server, session, SEND, { c: conversationId, t: text });
          if (res.errors || !res.data?.sendMessage?.id) this.refused.push(JSON.stringify(res));
          else this.acked.push({ id: res.data.sendMessage.id, text, at: Date.now() });
        } catch {
          this.cutOff += 1;
          if (server.child.exitCode !== null || server.child.signalCode !== null) return;
        }
        await sleep(20);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }
}

interface Instance {
  /** Texts of the messages it received, in order. */
  texts: string[];
  startedAt: number;
  /** When B counted it running (Redis confirmed its channel): the client refetches then. */
  liveAt: number | null;
  completedAt: number | null;
  error: unknown;
}

/** A person watching the workspace on B, resubscribing whenever the server ends the stream. */
class Watcher {
  readonly instances: Instance[] = [];
  private stopped = false;

  constructor(
    private readonly client: Client,
    private readonly serverId: string,
  ) {
    this.subscribe();
  }

  private subscribe(): void {
    const instance: Instance = {
      texts: [],
      startedAt: Date.now(),
      liveAt: null,
      completedAt: null,
      error: null,
    };
    this.instances.push(instance);
    this.client.subscribe(
      { query: WORKSPACE_EVENTS, variables: { id: this.serverId } },
      {
        next: (value) => {
          const event = (value.data as { workspaceEvents?: Record<string, any> } | undefined)
            ?.workspaceEvents;
          if (event?.type === 'MessageCreated') instance.texts.push(event.payload.message.text);
        },
        error: (err) => {
          instance.error = err;
        },
        complete: () => {
          instance.completedAt = Date.now();
          // The web client resubscribes and refetches what it shows.
          if (!this.stopped) this.subscribe();
        },
      },
    );
  }

  get current(): Instance {
    return this.instances[this.instances.length - 1]!;
  }

  /**
   * Acknowledged messages this person has not had: neither received, nor followed by the end of
   * a subscription (the resync signal) or by a subscription going live (when the client reads
   * what it shows). What is left is a message lost on a subscription that went on as if nothing
   * had happened.
   */
  missing(acked: Acked[]): string[] {
    const received = new Set(this.instances.flatMap((i) => i.texts));
    const lastNews = Math.max(
      0,
      ...this.instances.map((i) => Math.max(i.completedAt ?? 0, i.liveAt ?? Infinity)),
    );
    return acked.filter((m) => !received.has(m.text) && m.at >= lastNews).map((m) => m.text);
  }

  /**
   * Messages a subscription that was never ended received out of a sender's order. Not counted:
   * a message received again (delivery is at least once), and one acknowledged before the
   * subscription began. The client reads what it shows when it subscribes, so such a message is
   * already there; a copy of it can still arrive late, when the bytes of a PUBLISH that A gave up
   * on reach Redis after the stalled path is restored, behind the rows A or a drainer published
   * on a new connection.
   */
  outOfOrder(acked: Acked[]): string[] {
    const ackedAt = new Map(acked.map((m) => [m.text, m.at]));
    const found: string[] = [];
    for (const instance of this.instances.filter((i) => i.completedAt === null)) {
      const last = new Map<string, number>();
      const seen = new Set<string>();
      for (const text of instance.texts) {
        if (seen.has(text)) continue;
        seen.add(text);
        if ((ackedAt.get(text) ?? Infinity) < instance.startedAt) continue;
        const [sender, seq] = text.split('#') as [string, string];
        if ((last.get(sender) ?? -1) > Number(seq)) found.push(text);
        last.set(sender, Number(seq));
      }
    }
    return found;
  }

  stop(): void {
    this.stopped = true;
  }
}

describe.skipIf(!REDIS_URL || TEST_DB !== 'postgres')('two processes whose Redis goes away', () => {
  let database: TestDatabase;
  const proxies: Record<'a' | 'b', FaultProxy> = {} as never;
  let env: Record<string, string>;
  let a: ServerProcess;
  let b: ServerProcess;
  let setup: AppContext;
  let serverId: string;
  let general: string;
  /** Signed in once: sessions live in the database, so they serve on every process. */
  const senders: Record<string, Session> = {};
  /** Started after A, to stand in for it once A is killed: it boots while the first cuts run. */
  let sparing: Promise<ServerProcess>;
  let spare: ServerProcess | undefined;
  let polling: Promise<void> | null = null;
  let stopPolling = false;
  const watchers: Watcher[] = [];
  const clients: Client[] = [];
  const acked: Acked[] = [];
  /** Each sender's next number: increasing across the outages, as subscriptions outlive them. */
  const nextSeq: Record<string, number> = { ann: 0, amos: 0 };

  /** Process A, reaching Redis through its proxy. */
  async function startA(): Promise<ServerProcess> {
    const server = new ServerProcess(await freePort(), await freePort(), {
      ...env,
      SVC_REDIS_URL: proxies.a.rewrite(REDIS_URL!),
    });
    await server.ready();
    return server;
  }

  /**
   * Marks the watchers' subscriptions live once B counts them all running. Only those started
   * before the reading was asked for: B frees a subscription's place before it sends `complete`.
   */
  async function pollLiveness(): Promise<void> {
    while (!stopPolling) {
      const asked = Date.now();
      const running = await b.gauge('svc_ws_subscriptions').catch(() => Number.NaN);
      if (running === watchers.length) {
        for (const w of watchers) {
          if (w.current.liveAt === null && w.current.startedAt < asked) w.current.liveAt = asked;
        }
      }
      await sleep(25);
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(REDIS_URL!);
    for (const side of ['a', 'b'] as const) {
      proxies[side] = await FaultProxy.start(target.hostname, Number(target.port || 6379));
    }
    env = {
      ...database.env,
      SVC_REDIS_PREFIX: redisTestPrefix(),
      // A stalled path is found within half a second, and rows are taken over after 2 s.
      SVC_REDIS_TIMEOUT_MS: '500',
      SVC_OUTBOX_GRACE_MS: String(GRACE_MS),
    };
    // The schema and the server keys are made here, so the processes can start together.
    setup = await createMigratedContext(
      database,
      { ...env, SVC_REDIS_URL: REDIS_URL!, SVC_LOG_LEVEL: 'warn' },
      { passive: true },
    );
    const accounts = (async () => {
      for (const username of ['ann', 'amos', 'wes', 'wren', 'wade']) {
        await setup.services.accounts.createPasswordAccount({
          username,
          password: PASSWORD,
          email: null,
        });
      }
    })();
    const startingB = (async () => {
      const server = new ServerProcess(await freePort(), await freePort(), {
        ...env,
        SVC_REDIS_URL: proxies.b.rewrite(REDIS_URL!),
      });
      await server.ready();
      return server;
    })();
    [b, a] = await Promise.all([startingB, startA(), accounts]);
    sparing = startA();
    sparing.then((s) => (spare = s)).catch(() => {});
    for (const name of ['ann', 'amos']) senders[name] = await login(a, name);
    const created = await gql(
      a,
      senders.ann!,
      'mutation { createWorkspace(input: { name: "Outage" }) { id channels { id name } } }',
    );
    serverId = created.data.createWorkspace.id;
    general = created.data.createWorkspace.channels.find(
      (c: { name: string }) => c.name === 'general',
    ).id;
    const invite = await gql(
      a,
      senders.ann!,
      'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
      { s: serverId },
    );
    const token = invite.data.createWorkspaceInvite.token;
    const join = 'mutation($t: String!) { joinWorkspace(token: $t) { id } }';
    expect((await gql(a, senders.amos!, join, { t: token })).errors).toBeUndefined();
    for (const name of ['wes', 'wren', 'wade']) {
      const session = await login(b, name);
      expect((await gql(b, session, join, { t: token })).errors).toBeUndefined();
      const client = clientOn(b, session, () => {});
      clients.push(client);
      watchers.push(new Watcher(client, serverId));
    }
    polling = pollLiveness();
    await until(
      () => watchers.every((w) => w.current.liveAt !== null),
      'the three subscriptions on B',
      20_000,
    );
  }, 300_000);

  afterAll(async () => {
    stopPolling = true;
    await polling;
    for (const w of watchers) w.stop();
    for (const c of clients) await c.dispose();
    for (const p of Object.values(proxies)) await p?.pass();
    await sparing?.catch(() => {});
    await Promise.all([a?.stop(), b?.stop(), spare?.stop()]);
    await setup?.close();
    for (const p of Object.values(proxies)) await p?.close();
    await database?.drop();
  }, 60_000);

  /**
   * Two people send through A; `fault` cuts what it cuts for CUT_MS (A is killed halfway when
   * `killA`), then everything is restored. Every message A acknowledged must reach each watcher
   * or be followed by the end of its subscription; subscriptions never ended got them in order.
   */
  async function outage(
    cut: () => Promise<void> | void,
    opts: { killA?: boolean } = {},
  ): Promise<void> {
    const started = Date.now();
    const sending = ['ann', 'amos'].map(
      (name) => new Sender(a, senders[name]!, general, name, nextSeq[name]!),
    );
    await sleep(400);
    await cut();
    if (opts.killA) {
      await sleep(CUT_MS / 2);
      await a.kill();
      await sleep(CUT_MS / 2);
    } else {
      await sleep(CUT_MS);
    }
    for (const p of Object.values(proxies)) await p.pass();
    const restored = Date.now();
    if (!opts.killA) await sleep(600);
    for (const s of sending) {
      await s.stop();
      nextSeq[s.name] = s.seq + 1;
    }
    const sent = sending.flatMap((s) => s.acked);
    acked.push(...sent);
    // No answer was an error, and the senders got answers all along.
    expect(sending.flatMap((s) => s.refused)).toEqual([]);
    expect(sent.filter((m) => m.at > started + 400 && m.at < restored).length).toBeGreaterThan(5);

    await until(
      () => watchers.every((w) => w.missing(sent).length === 0),
      'every acknowledged message delivered, or the subscription ended after it',
      20_000,
    ).catch(() => {
      throw new Error(
        `missing: ${JSON.stringify(watchers.map((w) => w.missing(sent).length))} of ${sent.length}`,
      );
    });
    for (const w of watchers) {
      expect(w.outOfOrder(acked)).toEqual([]);
      expect(w.instances.filter((i) => i.error !== null)).toEqual([]);
    }
    // Delivery is back to normal: a new message reaches every current subscription live.
    const via = opts.killA ? b : a;
    const marker = `marker#${started}`;
    const session = senders.ann!;
    await until(
      async () => {
        await gql(via, session, SEND, { c: general, t: `${marker}-${Date.now()}` });
        return watchers.every((w) => w.current.texts.some((t) => t.startsWith(marker)));
      },
      'a new message live on every subscription',
      20_000,
    );
  }

  it('holds what A publishes while its Redis is refused, and publishes it after', async () => {
    await outage(() => proxies.a.refuse());
  });

  it('tells the watchers to resync when B cannot hear Redis (refused)', async () => {
    await outage(() => proxies.b.refuse());
  });

  it('both sides refused', async () => {
    await outage(async () => {
      await proxies.a.refuse();
      await proxies.b.refuse();
    });
  });

  it("A's path stalled", async () => {
    await outage(() => proxies.a.stall());
  });

  it("B's path stalled", async () => {
    await outage(() => proxies.b.stall());
  });

  it('both paths stalled', async () => {
    await outage(() => {
      proxies.a.stall();
      proxies.b.stall();
    });
  });

  it("A killed while its Redis is cut: B's drainer publishes what A had acknowledged", async () => {
    await outage(() => proxies.a.refuse(), { killA: true });
    // The spare booted beside other files' migrations; one that could not boot is started again
    // (what this case proves is B's drainer, not the spare's first boot).
    a = await sparing.catch(() => startA());
  });

  it('A killed while both are cut: B publishes it once its own Redis is back', async () => {
    await outage(
      async () => {
        await proxies.a.refuse();
        await proxies.b.refuse();
      },
      { killA: true },
    );
  });

  it('stored every acknowledged message once', async () => {
    const rows = await setup.db.kysely
      .selectFrom('message')
      .select(['id', 'text'])
      .where('conversationId', '=', general)
      .execute();
    const byText = new Map<string, number>();
    for (const row of rows) byText.set(row.text ?? '', (byText.get(row.text ?? '') ?? 0) + 1);
    expect(acked.filter((m) => byText.get(m.text) !== 1)).toEqual([]);
  });
});
