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

// SQLite only: a commit waits for the disk off the event loop (src/db/sqlite/durable-commits.ts). The
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
    // The event loop and the connection are free: a read runs meanwhile (and sees the message,
    // which the answer below must not show before it is on the disk)...
    const rows = await t.ctx.db.kysely
      .selectFrom('message')
      .select('text')
      .where('text', '=', 'written to a slow disk')
      .execute();
    expect(rows).toHaveLength(1);
    // ...while the next message waits for the next group, after this flush.
    const second = sendRaw(t, member, general, 'written meanwhile');
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
    expect(items.map((m) => m.text)).toContain('written to a slow disk');
    expect((await health).statusCode).toBe(200);
    for (let i = 0; i < 50 && events.ofType('MessageCreated').length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(events.ofType('MessageCreated')).toHaveLength(2);
    events.stop();
  });
});
