import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { until } from '../_util/until.js';
import {
  BACKGROUND,
  conversationOf,
  createWorkspace,
  inviteAndJoin,
  ok,
  recordQueries,
  recordUser,
  send,
} from '../conversations/_helpers.js';
import { generalOf } from '../notifications/_helpers.js';
import { recordEvents } from '../workspaces/_helpers.js';

// markRead moves the caller's read marker forward, never back, and announces ReadMarkerUpdated
// only when it moved; on PostgreSQL the move and its event are one statement.
const MARK = `mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id unreadCount } }`;

describe(`markRead (${TEST_DB})`, () => {
  const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
  let t: TestApp;
  let olga: Agent, mike: Agent;
  let serverId: string, general: string;
  /** Set by a test: each flush of SQLite's log waits for it (a slow disk made on purpose). */
  let hold: Promise<void> | null = null;

  const mark = async (agent: Agent, c: string, m: string) =>
    ok(await t.gql(MARK, { c, m }, agent)).markRead as { id: string; unreadCount: number };

  beforeAll(async () => {
    t = await createTestApp({
      clock,
      overrides: {
        beforeFlush: async () => {
          if (hold) await hold;
        },
      },
    });
    [olga, mike] = await Promise.all(
      ['olgaread', 'mikeread'].map((u) => signUpAndIn(t, { username: u })),
    );
    serverId = (await createWorkspace(t, olga, 'Reading')).id;
    await inviteAndJoin(t, olga, serverId, [mike]);
    general = await generalOf(t, olga, serverId);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('announces a marker that moved, and nothing for one that would go back or stay', async () => {
    const events = recordEvents(t, serverId);
    const first = await send(t, olga, general, 'one');
    clock.advance(1000);
    const second = await send(t, olga, general, 'two');
    events.clear();

    expect((await mark(mike, general, second.id)).unreadCount).toBe(0);
    const moved = events.ofType('ReadMarkerUpdated');
    expect(moved).toHaveLength(1);
    expect(moved[0]!.payload).toMatchObject({
      userId: mike.id,
      messageId: second.id,
      audience: { kind: 'users', userIds: [mike.id] },
    });

    // Back to an older message, and the same one again: the marker stays, nobody is told.
    expect((await mark(mike, general, first.id)).unreadCount).toBe(0);
    await mark(mike, general, second.id);
    expect(events.ofType('ReadMarkerUpdated')).toHaveLength(1);
    events.stop();
  });

  it('writes nothing for a marker already at or past the message', async () => {
    clock.advance(1000);
    const older = await send(t, olga, general, 'older');
    clock.advance(1000);
    const newer = await send(t, olga, general, 'newer');
    await mark(mike, general, newer.id);
    await t.ctx.services.notifications.settled();
    for (const m of [older, newer]) {
      const texts = await recordQueries(() => mark(mike, general, m.id));
      const writes = texts.filter(
        (s) => /\bupdate\b/i.test(s) || /^\s*(begin|savepoint)\b/i.test(s),
      );
      expect(writes, writes.join('\n')).toEqual([]);
    }
    // A new message is still read by a move forward.
    clock.advance(1000);
    const newest = await send(t, olga, general, 'newest');
    expect((await mark(mike, general, newer.id)).unreadCount).toBe(1);
    expect((await mark(mike, general, newest.id)).unreadCount).toBe(0);
  });

  it('writes once for the moves asked while the same marker moves, and announces where it ends', async () => {
    const places: string[] = [];
    for (const text of ['p1', 'p2', 'p3']) {
      clock.advance(1000);
      places.push((await send(t, olga, general, text)).id);
    }
    await t.ctx.services.notifications.settled();
    const events = recordEvents(t, serverId);
    const moves = t.ctx.services.messages.reading.markerMoves;
    const joinedBefore = moves.joined;
    // The first move is held under way: on SQLite its commit waits for the disk, on PostgreSQL
    // its update waits for the marker's row, locked by another transaction.
    let letGo: () => void = () => {};
    const gate = new Promise<void>((r) => (letGo = r));
    let locked: () => void = () => {};
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder =
      TEST_DB === 'postgres'
        ? t.ctx.db.transaction(async (tx) => {
            await tx.db
              .selectFrom('conversation_member')
              .select('accountId')
              .where('conversationId', '=', general)
              .where('accountId', '=', mike.id)
              .forUpdate()
              .execute();
            locked();
            await gate;
          })
        : ((hold = gate), locked(), Promise.resolve());
    await isLocked;
    let texts: string[] = [];
    const recorded = recordQueries(async () => {
      const first = mark(mike, general, places[0]!);
      await until(() => moves.underWay === 1, 'the first move under way');
      const rest = [mark(mike, general, places[1]!), mark(mike, general, places[2]!)];
      await until(() => moves.joined === joinedBefore + 2, 'two requests joining the move');
      hold = null;
      letGo();
      await first;
      // Both later requests are answered after the one write that covers them.
      expect((await Promise.all(rest)).map((a) => a.unreadCount)).toEqual([0, 0]);
    }).then((x) => (texts = x));
    await recorded;
    await holder;
    const writes = texts.filter((s) => s.includes('conversation_member') && /\bupdate\b/i.test(s));
    expect(writes, writes.join('\n')).toHaveLength(2);
    expect(events.ofType('ReadMarkerUpdated').map((e) => e.payload.messageId)).toEqual([
      places[0],
      places[2],
    ]);
    events.stop();
  });

  it("tells only the reader's own topic in a direct conversation", async () => {
    const dm = (await conversationOf(t, olga, [mike])).conversation.id as string;
    const m = await send(t, olga, dm, 'hello');
    const mikes = recordUser(t, mike.id);
    const olgas = recordUser(t, olga.id);
    await mark(mike, dm, m.id);
    expect(mikes.ofType('ReadMarkerUpdated').map((e) => e.payload.messageId)).toEqual([m.id]);
    expect(olgas.ofType('ReadMarkerUpdated')).toEqual([]);
    mikes.stop();
    olgas.stop();
  });

  it('costs the session with the access, the message and one statement on PostgreSQL', async () => {
    clock.advance(1000);
    const m = await send(t, olga, general, 'three');
    await t.ctx.services.notifications.settled();
    const texts = await recordQueries(() =>
      t.gql(
        'mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id } }',
        {
          c: general,
          m: m.id,
        },
        mike,
      ),
    );
    const writes = texts.filter((s) => s.includes('conversation_member') && /\bupdate\b/.test(s));
    expect(writes).toHaveLength(1);
    if (TEST_DB === 'postgres') {
      // The move and its event's outbox row (when rows are kept) in one statement, no BEGIN.
      expect(texts.filter((s) => /^(begin|commit)$/i.test(s.trim()))).toEqual([]);
      // The caller's access to the conversation is read with the session (prefetched-access.ts).
      // A tick of the server's periodic work inside the window is not the request's.
      const own = texts.filter((s) => !BACKGROUND.test(s) || writes.includes(s));
      expect(own, own.join('\n')).toHaveLength(3);
    }
  });
});
