import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
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

  const mark = async (agent: Agent, c: string, m: string) =>
    ok(await t.gql(MARK, { c, m }, agent)).markRead as { id: string; unreadCount: number };

  beforeAll(async () => {
    t = await createTestApp({ clock });
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
