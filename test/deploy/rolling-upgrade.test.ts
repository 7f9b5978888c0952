import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Client } from 'graphql-ws';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { knownMigrations, MIGRATION_TABLE } from '../../src/db/migrate.js';
import { createTestDatabase, PG_URL, TEST_DB, type TestDatabase } from '../_util/app.js';
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
import { Collected, until, WORKSPACE_EVENTS } from '../realtime/_helpers.js';

// A rolling upgrade (docs/operations.md, "Upgrades"): two nodes of the previous release serve
// while a node of this release starts, migrates and serves, and the previous release's nodes keep
// answering correctly on the migrated schema until they are stopped. The previous release is the
// build before the newest migration was added, taken from git and run from its sources. This is
// the test of the rule that a release's migrations only add: one that drops or renames what the
// previous release reads fails here.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REDIS_URL = process.env.SVC_TEST_REDIS_URL;

const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });

/** The commit before the newest migration was added, or why there is none to run. */
function previousRelease(): { commit: string } | { skip: string } {
  const added = git('log', '-1', '--format=%H', '--diff-filter=A', '--', 'src/db/migrations/');
  if (added.status !== 0) return { skip: `git cannot read the history: ${added.stderr.trim()}` };
  const newest = added.stdout.trim();
  if (!newest) return { skip: 'no commit in the history added a migration (a shallow clone?)' };
  const parent = git('rev-parse', '--verify', '--quiet', `${newest}^`);
  if (parent.status !== 0) return { skip: `the history ends at ${newest} (a shallow clone)` };
  return { commit: parent.stdout.trim() };
}

const previous = previousRelease();
const skip =
  !REDIS_URL || TEST_DB !== 'postgres'
    ? 'several nodes need PostgreSQL and Redis'
    : 'skip' in previous
      ? previous.skip
      : null;

/** The previous release's sources in a directory of their own, with this checkout's packages. */
function checkOut(commit: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-previous-'));
  const archive = spawnSync('git', ['archive', '--format=tar', commit, 'src', 'package.json'], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (archive.status !== 0) throw new Error(`git archive: ${String(archive.stderr)}`);
  const tar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (tar.status !== 0) throw new Error(`tar: ${String(tar.stderr)}`);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

async function signup(node: ServerProcess, username: string): Promise<Session> {
  const res = await fetch(`${node.base}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($i: SignupWithInviteInput!) { signupWithInvite(input: $i) { user { id } } }',
      variables: { i: { username, password: PASSWORD } },
    }),
  });
  const body = (await res.json()) as { errors?: unknown };
  expect(body.errors).toBeUndefined();
  return login(node, username);
}

const SEND =
  'mutation($c: ID!, $t: String!) { sendMessage(input: { conversationId: $c, text: $t }) { id } }';
const READ = 'query($c: ID!) { messages(conversationId: $c, limit: 50) { items { text } } }';

// The reporter shows why it was skipped in the name.
describe.skipIf(skip !== null)(
  `a rolling upgrade from the previous release${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let database: TestDatabase;
    let oldTree: string;
    let oldA: ServerProcess;
    let oldB: ServerProcess;
    let next: ServerProcess | undefined;
    let env: Record<string, string>;
    const clients: Client[] = [];

    beforeAll(async () => {
      oldTree = checkOut((previous as { commit: string }).commit);
      database = await createTestDatabase();
      env = {
        ...database.env,
        SVC_REDIS_URL: REDIS_URL!,
        SVC_REDIS_PREFIX: redisTestPrefix(),
        SVC_SIGNUP_REQUIRE_KEYS: 'false',
        SVC_OPEN_REGISTRATION: 'true',
      };
      // The previous release: the first node migrates the empty schema to its own version.
      oldA = new ServerProcess(await freePort(), await freePort(), env, oldTree);
      await oldA.ready();
      oldB = new ServerProcess(await freePort(), await freePort(), env, oldTree);
      await oldB.ready();
    }, 240_000);

    afterAll(async () => {
      for (const c of clients) await c.dispose();
      await Promise.all([oldA?.stop(), oldB?.stop(), next?.stop()]);
      await database?.drop();
      if (oldTree) fs.rmSync(oldTree, { recursive: true, force: true });
    }, 60_000);

    it('keeps the previous release answering while this one migrates and serves beside it', async () => {
      const alice = await signup(oldA, 'alice');
      const bob = await signup(oldB, 'bob');
      const created = await gql(
        oldA,
        alice,
        'mutation { createWorkspace(input: { name: "Upgrade" }) { id channels { id name } } }',
      );
      const space = created.data.createWorkspace;
      const general = space.channels.find((c: { name: string }) => c.name === 'general').id;
      const invite = await gql(
        oldA,
        alice,
        'mutation($s: ID!) { createWorkspaceInvite(input: { serverId: $s }) { token } }',
        { s: space.id },
      );
      const joined = await gql(
        oldB,
        bob,
        'mutation($t: String!) { joinWorkspace(token: $t) { id } }',
        {
          t: invite.data.createWorkspaceInvite.token,
        },
      );
      expect(joined.errors).toBeUndefined();
      expect(
        (await gql(oldA, alice, SEND, { c: general, t: 'before the upgrade' })).errors,
      ).toBeUndefined();

      // Bob listens on a node of the previous release through the whole upgrade.
      const onOld = clientOn(oldB, bob, () => {});
      clients.push(onOld);
      const sub = new Collected(onOld, WORKSPACE_EVENTS, { id: space.id });
      await until(
        async () => (await oldB.gauge('svc_ws_subscriptions')) === 1,
        'the subscription',
        30_000,
      );

      // This release starts on the same database and Redis, and migrates.
      next = new ServerProcess(await freePort(), await freePort(), env);
      await next.ready();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      try {
        const rows = await client.query<{ name: string }>(
          `select name from ${database.pgSchema}.${MIGRATION_TABLE} order by name`,
        );
        expect(rows.rows.map((r) => r.name)).toEqual(knownMigrations());
      } finally {
        await client.end();
      }

      // Every node answers, on the migrated schema, what the others wrote.
      const aliceNext = await login(next, 'alice');
      expect(
        (await gql(oldA, alice, SEND, { c: general, t: 'from the previous release' })).errors,
      ).toBeUndefined();
      expect(
        (await gql(next, aliceNext, SEND, { c: general, t: 'from this release' })).errors,
      ).toBeUndefined();
      await until(
        () => {
          const text = JSON.stringify(sub.events('workspaceEvents'));
          return text.includes('from the previous release') && text.includes('from this release');
        },
        'both messages on the previous release’s subscription',
        30_000,
      );
      for (const [node, session] of [
        [oldB, bob],
        [next, await login(next, 'bob')],
      ] as const) {
        const read = await gql(node, session, READ, { c: general });
        expect(read.errors).toBeUndefined();
        expect(read.data.messages.items.map((m: { text: string }) => m.text).sort()).toEqual([
          'before the upgrade',
          'from the previous release',
          'from this release',
        ]);
      }
      const search = await gql(
        oldA,
        alice,
        '{ searchMessages(query: "release") { items { message { text } } } }',
      );
      expect(search.errors).toBeUndefined();
      expect(search.data.searchMessages.items.length).toBeGreaterThanOrEqual(1);

      // Probes and versions say the same on every node (contract, Versioning).
      const versions = new Set<number>();
      for (const node of [oldA, oldB, next]) {
        expect((await fetch(`${node.base}/readyz`)).status).toBe(200);
        const info = await gql(node, alice, '{ serverInfo { apiVersion } }');
        versions.add(info.data.serverInfo.apiVersion as number);
      }
      expect(versions.size).toBe(1);

      // The previous release's nodes are stopped; this one goes on alone.
      await Promise.all([oldA.stop(), oldB.stop()]);
      const after = await gql(next, aliceNext, SEND, { c: general, t: 'after the upgrade' });
      expect(after.errors).toBeUndefined();
      expect((await fetch(`${next.base}/readyz`)).status).toBe(200);
    }, 240_000);
  },
);
