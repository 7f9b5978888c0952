import path from 'node:path';

import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestDatabase, TEST_DB, type TestDatabase } from '../_util/app.js';
import { freePort, gql, login, PASSWORD, ServerProcess } from '../_util/server-process.js';
import { cli } from '../cli/cli-io.js';

// A real `svc serve` on SQLite killed with SIGKILL while sends go on: the index rows it held
// for a write after their sends (src/services/search/held-terms.ts) are lost with it, and the
// next start writes them, so every acknowledged message is found by its words.

describe.runIf(TEST_DB === 'sqlite')('held index rows across a kill -9 (SQLite)', () => {
  let d: TestDatabase;
  let server: ServerProcess | null = null;

  beforeAll(async () => {
    d = await createTestDatabase();
    expect((await cli(['migrate'], d.env)).code).toBe(0);
    const created = await cli(['account', 'create', 'hera', '--password-stdin'], d.env, PASSWORD);
    expect(created.code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await server?.kill();
    await d?.drop();
  });

  /** Acknowledged messages that have no index row, read straight from the database file. */
  const lacking = (ids: readonly string[]) => {
    const db = new Sqlite(path.join(d.dataDir, 'svc.sqlite'), { readonly: true });
    try {
      const has = db.prepare('select 1 from message_search where "messageId" = ?');
      return ids.filter((id) => has.get(id) === undefined);
    } finally {
      db.close();
    }
  };

  it('writes on the next start the rows a killed server held', { timeout: 180_000 }, async () => {
    server = new ServerProcess(await freePort(), await freePort(), d.env);
    await server.ready();
    let session = await login(server, 'hera');
    const created = await gql(
      server,
      session,
      'mutation { createWorkspace(input: { name: "Kill" }) { id channels { id name } } }',
    );
    const general = created.data.createWorkspace.channels.find(
      (c: { name: string }) => c.name === 'general',
    ).id;

    // Four senders without pause; the server is killed once 200 sends are acknowledged, while
    // more are under way, so rows acknowledged in the last moment are still held.
    const acked: string[] = [];
    const wordOf = new Map<string, string>();
    let killed = false;
    const running = server;
    const senders = [0, 1, 2, 3].map(async (n) => {
      for (let i = 0; !killed; i++) {
        try {
          const res = await gql(
            running,
            session,
            'mutation($c: ID!, $t: String!) { sendMessage(input: { conversationId: $c, text: $t }) { id } }',
            { c: general, t: `sandpiper w${n}x${i} on the shore` },
          );
          if (res.data?.sendMessage) {
            acked.push(res.data.sendMessage.id);
            wordOf.set(res.data.sendMessage.id, `w${n}x${i}`);
          }
        } catch {
          return; // the server is gone
        }
      }
    });
    while (acked.length < 200) await new Promise((r) => setTimeout(r, 5));
    await server.kill();
    killed = true;
    await Promise.all(senders);
    const lost = lacking(acked);
    expect(lost.length).toBeGreaterThan(0);

    server = new ServerProcess(await freePort(), await freePort(), d.env);
    await server.ready();
    expect(lacking(acked)).toEqual([]);
    session = await login(server, 'hera');
    const last = lost[lost.length - 1]!;
    const found = await gql(
      server,
      session,
      'query($q: String!) { searchMessages(query: $q) { items { message { id } } } }',
      { q: wordOf.get(last)! },
    );
    expect(
      found.data.searchMessages.items.map((i: { message: { id: string } }) => i.message.id),
    ).toEqual([last]);
  });
});
