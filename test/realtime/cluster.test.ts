import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/index.js';
import { loadSecrets } from '../../src/config/secrets.js';
import { createAppContext, type AppContext } from '../../src/context.js';
import { createTestDatabase, TEST_DB, type TestDatabase } from '../_util/app.js';
import { redisTestPrefix } from '../_util/redis.js';
import {
  clientOn,
  freePort,
  gql,
  login,
  PASSWORD,
  ServerProcess,
} from '../_util/server-process.js';

import { Collected, until, WORKSPACE_EVENTS } from './_helpers.js';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL;

// Contract point 5: with SVC_REDIS_URL, events reach subscribers on every process, and a session
// ended on one process closes its sockets on the others within the recheck interval. Two real
// server processes on one PostgreSQL schema and one Redis; SQLite is one process only.
describe.skipIf(!REDIS_URL || TEST_DB !== 'postgres')('two server processes', () => {
  let database: TestDatabase;
  let a: ServerProcess;
  let b: ServerProcess;
  let setup: AppContext;
  const clients: Client[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      ...database.env,
      SVC_REDIS_URL: REDIS_URL!,
      SVC_REDIS_PREFIX: redisTestPrefix(),
      SVC_WS_SESSION_RECHECK_SECS: '1',
    };
    // One after the other: the first boot migrates the schema and makes the server keys.
    a = new ServerProcess(await freePort(), await freePort(), env);
    await a.ready();
    b = new ServerProcess(await freePort(), await freePort(), env);
    await b.ready();
    setup = await createAppContext(loadConfig(env), loadSecrets(env), {
      passive: true,
      pgSchema: database.pgSchema,
    });
    for (const username of ['alice', 'bob']) {
      await setup.services.accounts.createPasswordAccount({
        username,
        password: PASSWORD,
        email: null,
      });
    }
  }, 180_000);

  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await Promise.all([a?.stop(), b?.stop()]);
    await setup?.close();
    await database?.drop();
  }, 60_000);

  it('delivers a message sent through process A to a subscriber on process B', async () => {
    const alice = await login(a, 'alice');
    const bob = await login(b, 'bob');
    const created = await gql(
      a,
      alice,
      'mutation { createWorkspace(input: { name: "Two" }) { id channels { id name } } }',
    );
    const space = created.data.createWorkspace;
    const general = space.channels.find((c: { name: string }) => c.name === 'general').id;
    const invite = await gql(
      a,
      alice,
      'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
      {
        s: space.id,
      },
    );
    const joined = await gql(b, bob, 'mutation($t: String!) { joinWorkspace(token: $t) { id } }', {
      t: invite.data.createWorkspaceInvite.token,
    });
    expect(joined.errors).toBeUndefined();

    const onB = clientOn(b, bob, () => {});
    clients.push(onB);
    const sub = new Collected(onB, WORKSPACE_EVENTS, { id: space.id });
    await until(
      async () => (await b.gauge('svc_ws_subscriptions')) === 1,
      'the subscription on B',
      20_000,
    );

    const sent = await gql(
      a,
      alice,
      'mutation($c: ID!) { sendMessage(input: { conversationId: $c, text: "from A" }) { id } }',
      {
        c: general,
      },
    );
    expect(sent.errors).toBeUndefined();
    await until(
      () => JSON.stringify(sub.events('workspaceEvents')).includes('from A'),
      'the message on B',
      20_000,
    );
    const created2 = sub.events('workspaceEvents').filter((e) => e.type === 'MessageCreated');
    expect(created2).toHaveLength(1);
    expect(created2[0]!.conversationId).toBe(general);
    for (const c of clients.splice(0)) await c.dispose();
    await until(async () => (await b.gauge('svc_ws_connections')) === 0, 'B to be idle');
  });

  it('shows a user connected to process A online to a member asking process B', async () => {
    const alice = await login(a, 'alice');
    const bob = await login(b, 'bob');
    const spaces = await gql(b, bob, '{ me { id } }');
    const bobId = spaces.data.me.id;
    const aliceId = (await gql(a, alice, '{ me { id } }')).data.me.id;
    const created = await gql(
      a,
      alice,
      'mutation { createWorkspace(input: { name: "Presence" }) { id } }',
    );
    const serverId = created.data.createWorkspace.id;
    const invite = await gql(
      a,
      alice,
      'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
      {
        s: serverId,
      },
    );
    await gql(b, bob, 'mutation($t: String!) { joinWorkspace(token: $t) { id } }', {
      t: invite.data.createWorkspaceInvite.token,
    });
    const watcher = clientOn(b, bob, () => {});
    clients.push(watcher);
    const sub = new Collected(watcher, WORKSPACE_EVENTS, { id: serverId });
    await until(
      async () => (await b.gauge('svc_ws_subscriptions')) === 1,
      'the subscription on B',
      20_000,
    );
    const onA = clientOn(a, alice, () => {});
    clients.push(onA);
    await until(
      () =>
        sub
          .events('workspaceEvents')
          .some(
            (e) =>
              e.type === 'PresencesChanged' &&
              (e.payload.changes as Array<{ userId: string; status: string }>).some(
                (c) => c.userId === aliceId && c.status === 'ONLINE',
              ),
          ),
      'alice online, announced on B',
      20_000,
    );
    const seen = await gql(b, bob, 'query($u: [ID!]!) { presence(userIds: $u) { status } }', {
      u: [aliceId, bobId],
    });
    expect(seen.data.presence.map((p: { status: string }) => p.status)).toEqual([
      'ONLINE',
      'ONLINE',
    ]);
    for (const c of clients.splice(0)) await c.dispose();
    await until(async () => (await b.gauge('svc_ws_connections')) === 0, 'B to be idle');
  });

  it('closes the socket on B with 4401 within the recheck interval after a logout on A', async () => {
    const bobOnB = await login(b, 'bob');
    let closed: { code: number; reason: string } | null = null;
    const onB = clientOn(b, bobOnB, (code, reason) => (closed = { code, reason }));
    clients.push(onB);
    const relay = new Collected(onB, 'subscription { relayStream { type } }');
    await until(
      async () => (await b.gauge('svc_ws_subscriptions')) === 1,
      'the subscription on B',
      20_000,
    );

    // The same session, ended through process A: B hears of it only by its recheck (1 s).
    const out = await gql(a, bobOnB, 'mutation { logout }');
    expect(out.data?.logout).toBe(true);
    const endedAt = Date.now();
    await until(() => closed !== null, 'the close on B', 10_000);
    expect(closed).toEqual({ code: 4401, reason: 'session ended' });
    expect(relay.completed).toBe(true);
    // Within the recheck interval (1 s), with slack for a busy machine.
    expect(Date.now() - endedAt).toBeLessThan(5_000);
    await until(
      async () => (await b.gauge('svc_ws_connections')) === 0,
      'the place to be freed on B',
    );
    expect(await b.gauge('svc_ws_subscriptions')).toBe(0);
  });
});
