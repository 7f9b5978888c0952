import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  createWorkspace,
  inviteAndJoin,
  ok,
  recordEvents,
  sendRaw,
} from '../conversations/_helpers.js';
import { generalOf } from '../notifications/_helpers.js';

const MESSAGES = 'query($id: ID!) { messages(conversationId: $id) { items { text } } }';

/** Whether `p` settles within a few turns of the event loop (with I/O between them). */
async function settles(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5 && !done; i++) await new Promise((r) => setTimeout(r, 20));
  return done;
}

// SQLite only: a commit waits for the disk off the event loop (src/db/durable-commits.ts). The
// disk is made slow on purpose by holding each flush until the test lets it go.
describe.skipIf(TEST_DB !== 'sqlite')('a slow disk on SQLite', () => {
  let t: TestApp;
  let owner: Agent, member: Agent;
  let serverId: string, general: string;
  let hold: Promise<void> | null = null;
  let letGo: () => void = () => {};
  let flushesHeld = 0;

  beforeAll(async () => {
    t = await createTestApp({
      overrides: {
        beforeFlush: async () => {
          if (!hold) return;
          flushesHeld += 1;
          await hold;
        },
      },
    });
    owner = await signUpAndIn(t);
    member = await signUpAndIn(t);
    serverId = (await createWorkspace(t, owner, 'Slow disk')).id;
    await inviteAndJoin(t, owner, serverId, [member]);
    general = await generalOf(t, owner, serverId);
  });

  afterAll(async () => {
    letGo();
    await t?.close();
  });

  it('goes on while a commit waits for the disk, and answers and announces only what is on it', async () => {
    const events = recordEvents(t, serverId);
    hold = new Promise<void>((r) => (letGo = r));
    const sent = sendRaw(t, owner, general, 'written to a slow disk');
    expect(await settles(sent)).toBe(false);
    expect(flushesHeld).toBe(1);
    // The event loop and the connection are free: a second message is written meanwhile (another
    // connection to the file sees it), though neither is acknowledged yet...
    const second = sendRaw(t, member, general, 'written meanwhile');
    const other = new Sqlite(t.ctx.db.file!, { readonly: true });
    try {
      const stored = () =>
        other
          .prepare('select count(*) as n from message where text = ?')
          .get('written meanwhile') as {
          n: number;
        };
      for (let i = 0; i < 50 && stored().n === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(stored().n).toBe(1);
    } finally {
      other.close();
    }
    expect(await settles(second)).toBe(false);
    // ...a read runs, but its answer waits for the disk too, and no event goes out before it.
    const read = t.gql(MESSAGES, { id: general }, member);
    expect(await settles(read)).toBe(false);
    const health = t.inject({ method: 'GET', url: '/healthz' });
    expect(await settles(health)).toBe(false);
    expect(events.ofType('MessageCreated')).toEqual([]);

    hold = null;
    letGo();
    expect((ok(await sent).sendMessage as { text: string }).text).toBe('written to a slow disk');
    expect((ok(await second).sendMessage as { text: string }).text).toBe('written meanwhile');
    const items = (ok(await read).messages as { items: Array<{ text: string }> }).items;
    expect(items.map((m) => m.text)).toEqual(
      expect.arrayContaining(['written to a slow disk', 'written meanwhile']),
    );
    expect((await health).statusCode).toBe(200);
    for (let i = 0; i < 50 && events.ofType('MessageCreated').length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(events.ofType('MessageCreated')).toHaveLength(2);
    events.stop();
  });
});
