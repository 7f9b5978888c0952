import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import type { MessageTable } from '../../src/db/tables/messages.js';
import { newMessageRow } from '../../src/services/messages/message-rows.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { ok, recordQueries, send, sharedChannel } from '../conversations/_helpers.js';
import { cli } from '../moderation/_helpers.js';

const PAGE = `query($c: ID!, $l: Int) { messages(conversationId: $c, limit: $l) {
  items { id text isDeleted replyCount } hasMore } }`;
/** The page query's statement (services/messages/queries.ts, messagePageQuery). */
const PAGE_READ = /from "message" where "conversationId" = /;

// The newest page of each conversation is kept in memory while the server is the only process
// (services/messages/newest-pages.ts): every change of its messages must reach the next read.
describe(`newest pages kept in memory (${TEST_DB})`, () => {
  let t: TestApp;
  const clock = new ManualClock();
  let ann: Agent;
  let bob: Agent;
  let channelId: string;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    ann = await signUpAndIn(t, { username: 'annpages' });
    bob = await signUpAndIn(t, { username: 'bobpages' });
    channelId = await sharedChannel(t, bob, [ann], 'Pages');
    for (let i = 1; i <= 4; i += 1) {
      clock.advance(1000);
      await send(t, bob, channelId, `m${i}`);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The texts of the newest page of `limit`, oldest first, and whether the page read ran. */
  const page = async (limit = 3, reader: Agent = ann) => {
    let items: Array<{ id: string; text: string | null; isDeleted: boolean; replyCount: number }> =
      [];
    let hasMore = false;
    const statements = await recordQueries(async () => {
      const data = ok(await t.gql(PAGE, { c: channelId, l: limit }, reader)).messages;
      items = data.items;
      hasMore = data.hasMore;
    });
    return {
      items,
      hasMore,
      texts: items.map((m) => m.text),
      read: statements.some((q) => PAGE_READ.test(q)),
    };
  };

  it('reads a page once, then answers it from memory, per page size', async () => {
    expect(await page()).toMatchObject({ texts: ['m2', 'm3', 'm4'], hasMore: true, read: true });
    expect(await page()).toMatchObject({ texts: ['m2', 'm3', 'm4'], hasMore: true, read: false });
    expect(await page(10)).toMatchObject({
      texts: ['m1', 'm2', 'm3', 'm4'],
      hasMore: false,
      read: true,
    });
    expect(await page(10)).toMatchObject({ read: false });
  });

  it('adds a new message to the kept pages in its place, without reading them again', async () => {
    clock.advance(1000);
    await send(t, bob, channelId, 'm5');
    expect(await page()).toMatchObject({ texts: ['m3', 'm4', 'm5'], hasMore: true, read: false });
    expect(await page(10)).toMatchObject({ texts: ['m1', 'm2', 'm3', 'm4', 'm5'], read: false });
    // The sender's own next read is as fresh as anyone's.
    expect((await page(3, bob)).texts).toEqual(['m3', 'm4', 'm5']);
  });

  it('shows an edit on the next read', async () => {
    const last = (await page()).items.at(-1)!;
    ok(
      await t.gql(
        'mutation($m: ID!) { editMessage(messageId: $m, text: "m5 edited") { id } }',
        { m: last.id },
        bob,
      ),
    );
    expect((await page()).texts).toEqual(['m3', 'm4', 'm5 edited']);
  });

  it('shows a deletion on the next read', async () => {
    const [first] = (await page()).items;
    expect(await page()).toMatchObject({ read: false });
    ok(
      await t.gql(
        'mutation($m: ID!) { deleteMessage(messageId: $m) { id } }',
        { m: first!.id },
        bob,
      ),
    );
    expect((await page()).items.map((m) => m.isDeleted)).toEqual([true, false, false]);
  });

  it("shows a thread's reply count on the next read, and not the reply", async () => {
    const [, second] = (await page()).items;
    expect(await page()).toMatchObject({ read: false });
    await send(t, ann, channelId, 'a reply', second!.id);
    const now = await page();
    expect(now.items.map((m) => m.replyCount)).toEqual([0, 1, 0]);
    expect(now.texts).not.toContain('a reply');
  });

  describe('reads racing a change (a loader the test controls, real transactions)', () => {
    const conv = newId();
    const row = (text: string, createdAt: number) =>
      newMessageRow({ id: conv, workspaceId: newId() }, newId(), createdAt, {
        text,
        mentions: null,
      });
    const older = row('older', 1_000);
    const load = (rows: MessageTable[]) => async () => rows;
    const unreachable = async (): Promise<MessageTable[]> => {
      throw new Error('read again');
    };
    const texts = (rows: MessageTable[]) => rows.map((r) => r.text);
    const pages = () => t.ctx.services.messages.pages;

    it('adds a committed message to a kept page, and nothing a rollback took back', async () => {
      expect(texts(await pages().get(conv, 3, load([older])))).toEqual(['older']);
      const failed = await t.ctx.db
        .transaction(async (tx) => {
          pages().sending(tx, row('rolled back', 2_000));
          throw new Error('on purpose');
        })
        .catch((err: Error) => err.message);
      expect(failed).toBe('on purpose');
      expect(texts(await pages().get(conv, 3, unreachable))).toEqual(['older']);
      await t.ctx.db.transaction(async (tx) => pages().sending(tx, row('committed', 3_000)));
      expect(texts(await pages().get(conv, 3, unreachable))).toEqual(['committed', 'older']);
    });

    it('keeps no read made while a transaction changes the conversation', async () => {
      pages().forgetAll();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      const open = t.ctx.db.transaction(async (tx) => {
        pages().sending(tx, row('newest', 4_000));
        entered();
        await gate;
      });
      await inside;
      // A read while it is open (PostgreSQL reads the state before it; SQLite waits): answered,
      // not kept.
      expect(texts(await pages().get(conv, 3, load([older])))).toEqual(['older']);
      release();
      await open;
      expect(texts(await pages().get(conv, 3, load([row('reread', 5_000)])))).toEqual(['reread']);
    });

    it('keeps no read that started before a change committed and ended after', async () => {
      pages().forgetAll();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = pages().get(conv, 3, async () => {
        await gate;
        return [older];
      });
      await t.ctx.db.transaction(async (tx) => pages().sending(tx, row('meanwhile', 6_000)));
      release();
      // The slow read answers what it read, but a page without the committed message is not kept.
      expect(texts(await slow)).toEqual(['older']);
      expect(texts(await pages().get(conv, 3, load([row('reread', 7_000)])))).toEqual(['reread']);
    });

    it('drops kept pages at an edit or deletion, and keeps nothing read before it ended', async () => {
      pages().forgetAll();
      await pages().get(conv, 3, load([older]));
      await t.ctx.db.transaction(async (tx) => pages().changing(tx, conv));
      expect(texts(await pages().get(conv, 3, load([row('edited', 1_000)])))).toEqual(['edited']);
      await t.ctx.db.transaction(async (tx) => pages().changing(tx));
      expect(texts(await pages().get(conv, 3, load([row('after removal', 1_000)])))).toEqual([
        'after removal',
      ]);
    });
  });

  it("forgets every page when the drainer brings another process's changes", async () => {
    clock.advance(1000);
    await send(t, ann, channelId, 'by ann, purged later');
    expect((await page(3, bob)).texts).toContain('by ann, purged later');
    expect(await page(3, bob)).toMatchObject({ read: false });
    ok(
      await t.gql(
        'mutation($c: String!) { requestAccountDeletion(input: { confirmUsername: $c }) { scheduledFor } }',
        { c: 'annpages' },
        ann,
      ),
    );
    // The command line purges in its own process (--now: whatever the grace period); the
    // server's drainer then publishes what it wrote.
    expect((await cli(t, ['account', 'purge', '--now'])).code).toBe(0);
    await t.ctx.outbox.drain();
    const after = await page(3, bob);
    expect(after.read).toBe(true);
    expect(after.texts).not.toContain('by ann, purged later');
  });
});
