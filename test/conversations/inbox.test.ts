import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import {
  conversationOf,
  BACKGROUND,
  recordQueries,
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  send,
} from './_helpers.js';

const INBOX = `query($after: String, $before: String, $limit: Int) {
  inboxConversations(after: $after, before: $before, limit: $limit) {
    items { id kind name isMember unreadCount memberCount memberIds members { id username }
      lastActivityAt lastMessage { id text author { id username } reactions { emoji } pinned } }
    nextCursor prevCursor hasMore } }`;
const MARK = `mutation($c: ID!, $m: ID!) { markRead(conversationId: $c, messageId: $m) { id unreadCount } }`;
const CHANNELS = 'query($s: ID!) { channels(serverId: $s) { id name } }';

describe('inbox', () => {
  const clock = new ManualClock(Date.parse('2030-06-01T00:00:00Z'));
  let t: TestApp;
  let alice: Agent, bob: Agent, carol: Agent;
  let general: string, direct: string, group: string;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    [alice, bob, carol] = await Promise.all(
      ['alice', 'bob', 'carol'].map((u) => signUpAndIn(t, { username: `${u}inb` })),
    );
    const ws = await createWorkspace(t, alice, 'Inbox');
    await inviteAndJoin(t, alice, ws.id, [bob, carol]);
    const channels = ok(await t.gql(CHANNELS, { s: ws.id }, alice)).channels;
    general = channels.find((c: { name: string }) => c.name === 'general').id;
    clock.advance(1000);
    direct = (await conversationOf(t, alice, [bob])).conversation.id;
    clock.advance(1000);
    group = (await conversationOf(t, alice, [bob, carol], { name: 'Trio' })).conversation.id;
  });
  afterAll(async () => t?.close());

  it('lists channels, direct and group conversations by newest activity, with unread counts and last message', async () => {
    clock.advance(1000);
    await send(t, bob, general, 'morning all');
    clock.advance(1000);
    await send(t, bob, direct, 'one');
    const two = await send(t, bob, direct, 'two');
    await send(t, alice, group, 'my own message is never unread');

    const items = ok(await t.gql(INBOX, {}, alice)).inboxConversations.items;
    expect(items.map((i: { id: string }) => i.id).slice(0, 3)).toEqual([group, direct, general]);
    const byId = new Map(items.map((i: { id: string }) => [i.id, i]));
    expect(byId.get(direct)).toMatchObject({
      unreadCount: 2,
      lastMessage: { id: two.id, text: 'two', author: { id: bob.id } },
      memberCount: 2,
    });
    expect(byId.get(general)).toMatchObject({ kind: 'CHANNEL', unreadCount: 1 });
    expect(byId.get(group)).toMatchObject({ unreadCount: 0, name: 'Trio' });

    // Read markers move forward only.
    expect(ok(await t.gql(MARK, { c: direct, m: two.id }, alice)).markRead.unreadCount).toBe(0);
    const first = ok(
      await t.gql(
        'query($c: ID!) { messages(conversationId: $c) { items { id } } }',
        { c: direct },
        alice,
      ),
    ).messages.items[0].id;
    expect(ok(await t.gql(MARK, { c: direct, m: first }, alice)).markRead.unreadCount).toBe(0);
    // Another conversation's message, or one the caller cannot see: NOT_FOUND.
    expectCode(await t.gql(MARK, { c: general, m: two.id }, alice), 'NOT_FOUND');
    expectCode(await t.gql(MARK, { c: direct, m: two.id }, carol), 'NOT_FOUND');
  });

  it('pages with cursors both ways and refuses forged cursors and limits', async () => {
    const all = ok(await t.gql(INBOX, { limit: 100 }, alice)).inboxConversations.items.map(
      (i: { id: string }) => i.id,
    );
    expect(all.length).toBeGreaterThanOrEqual(4);
    const p1 = ok(await t.gql(INBOX, { limit: 2 }, alice)).inboxConversations;
    expect(p1.items.map((i: { id: string }) => i.id)).toEqual(all.slice(0, 2));
    expect(p1).toMatchObject({ hasMore: true, prevCursor: null });
    const p2 = ok(await t.gql(INBOX, { limit: 2, after: p1.nextCursor }, alice)).inboxConversations;
    expect(p2.items.map((i: { id: string }) => i.id)).toEqual(all.slice(2, 4));
    const back = ok(
      await t.gql(INBOX, { limit: 2, before: p2.prevCursor }, alice),
    ).inboxConversations;
    expect(back.items.map((i: { id: string }) => i.id)).toEqual(all.slice(0, 2));
    expect(back.nextCursor).toBeNull();

    expectCode(await t.gql(INBOX, { after: 'bm90LWEtY3Vyc29y' }, alice), 'VALIDATION');
    expectCode(await t.gql(INBOX, { after: '%%%' }, alice), 'VALIDATION');
    expectCode(
      await t.gql(INBOX, { after: p1.nextCursor, before: p1.nextCursor }, alice),
      'VALIDATION',
    );
    expectCode(await t.gql(INBOX, { limit: 0 }, alice), 'VALIDATION');
    expectCode(await t.gql(INBOX, { limit: 101 }, alice), 'VALIDATION');
  });

  it('costs the same number of queries for a page of 3 conversations and of 15 (no N+1)', async () => {
    const dan = await signUpAndIn(t, { username: 'daninb' });
    const mates = await Promise.all(
      Array.from({ length: 12 }, (_, i) => signUpAndIn(t, { username: `mate${i}inb` })),
    );
    const ws = await createWorkspace(t, dan, 'Many');
    await inviteAndJoin(t, dan, ws.id, mates);
    const count = async () => {
      // The sends' outbox rows and notifications are written in the background after commit:
      // not the page's cost.
      await t.ctx.outbox.flush();
      await t.ctx.services.notifications.settled();
      const texts = await recordQueries(async () => ok(await t.gql(INBOX, { limit: 50 }, dan)));
      // Authors come from the per-process cache when known (accounts/view-cache.ts): at most
      // one read of them per page, whatever its length.
      const authors = texts.filter((q) => /^select "id", "username", "displayName"/.test(q));
      expect(authors.length).toBeLessThanOrEqual(1);
      return texts.filter((q) => !BACKGROUND.test(q)).length - authors.length;
    };
    for (const m of mates.slice(0, 1))
      await send(t, m, (await conversationOf(t, dan, [m])).conversation.id, 'hi');
    const small = await count();
    for (const m of mates.slice(1)) {
      const c = (await conversationOf(t, dan, [m])).conversation.id;
      const msg = await send(t, m, c, `hi from ${m.username}`);
      ok(
        await t.gql(
          'mutation($m: ID!) { addReaction(messageId: $m, emoji: "👍") { id } }',
          { m: msg.id },
          dan,
        ),
      );
    }
    const items = ok(await t.gql(INBOX, { limit: 50 }, dan)).inboxConversations.items;
    expect(items.length).toBeGreaterThanOrEqual(14);
    const large = await count();
    expect(small).toBeGreaterThan(5);
    expect(large).toBe(small);
  });
});
