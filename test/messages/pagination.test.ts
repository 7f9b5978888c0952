import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DIRECT_SPACE_ID } from '../../src/db/direct-space.js';
import { ManualClock } from '../../src/lib/clock.js';
import { encodeCursor } from '../../src/lib/cursor.js';
import { newId } from '../../src/lib/ids.js';
import { messagePageQuery } from '../../src/services/messages/queries.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { conversationOf, countQueries, expectCode, ok, send } from '../conversations/_helpers.js';

const PAGE = `query($c: ID!, $before: String, $after: String, $limit: Int) {
  messages(conversationId: $c, before: $before, after: $after, limit: $limit) {
    items { id text author { username } reactions { emoji count } pinned replyCount }
    nextCursor prevCursor hasMore } }`;

type Page = {
  items: Array<{ id: string; text: string }>;
  nextCursor: string | null;
  prevCursor: string | null;
  hasMore: boolean;
};

describe('message pages', () => {
  const clock = new ManualClock(Date.parse('2030-08-01T00:00:00Z'));
  let t: TestApp;
  let ann: Agent, ben: Agent, cy: Agent;
  let conv: string;
  const texts = (p: Page) => p.items.map((m) => m.text);
  const page = async (vars: Record<string, unknown>, who: Agent = ann) =>
    ok(await t.gql(PAGE, { c: conv, ...vars }, who)).messages as Page;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    [ann, ben, cy] = await Promise.all(
      ['ann', 'ben', 'cy'].map((u) => signUpAndIn(t, { username: `${u}pg` })),
    );
    // ann and ben become contacts through a DM request accepted.
    const made = await conversationOf(t, ann, [ben]);
    ok(
      await t.gql(
        'mutation($id: ID!) { acceptDmRequest(requestId: $id) { id } }',
        { id: made.dmRequestsSent[0]!.id },
        ben,
      ),
    );
    conv = made.conversation.id;
    for (let i = 1; i <= 10; i++) {
      // Two messages share each millisecond: the id breaks the tie.
      if (i % 2 === 1) clock.advance(1);
      await send(t, i % 2 ? ann : ben, conv, `m${i}`);
    }
  });
  afterAll(async () => t?.close());

  it('pages back from the newest, and forward again, oldest first within a page', async () => {
    const p1 = await page({ limit: 4 });
    expect(texts(p1)).toEqual(['m7', 'm8', 'm9', 'm10']);
    expect(p1.hasMore).toBe(true);
    const p2 = await page({ limit: 4, before: p1.nextCursor });
    expect(texts(p2)).toEqual(['m3', 'm4', 'm5', 'm6']);
    const p3 = await page({ limit: 4, before: p2.nextCursor });
    expect(texts(p3)).toEqual(['m1', 'm2']);
    expect(p3).toMatchObject({ hasMore: false, nextCursor: null });
    const fwd = await page({ limit: 4, after: p3.prevCursor });
    expect(texts(fwd)).toEqual(['m3', 'm4', 'm5', 'm6']);
    const fwd2 = await page({ limit: 4, after: fwd.nextCursor });
    expect(texts(fwd2)).toEqual(['m7', 'm8', 'm9', 'm10']);
    expect(fwd2.hasMore).toBe(false);
    // Forward pages keep a cursor to poll with, even when nothing is newer yet.
    const none = await page({ limit: 4, after: fwd2.nextCursor });
    expect(none).toMatchObject({ items: [], hasMore: false, nextCursor: fwd2.nextCursor });
  });

  it('is stable under concurrent inserts: nothing repeated, nothing skipped', async () => {
    const p1 = await page({ limit: 3 });
    expect(texts(p1)).toEqual(['m8', 'm9', 'm10']);
    // New messages arrive, some in the same millisecond as the newest, while the reader pages.
    const arrivals = await Promise.all(['n1', 'n2', 'n3'].map((x) => send(t, ben, conv, x)));
    clock.advance(1);
    const p2 = await page({ limit: 3, before: p1.nextCursor });
    expect(texts(p2)).toEqual(['m5', 'm6', 'm7']);
    const newer = await page({ limit: 10, after: p1.prevCursor });
    expect(newer.items.map((m) => m.id).sort()).toEqual(arrivals.map((m) => m.id).sort());
    const seen = [...p1.items, ...p2.items, ...newer.items].map((m) => m.id);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses forged cursors, both directions at once and limits out of range', async () => {
    expectCode(await t.gql(PAGE, { c: conv, before: 'garbage!' }), 'UNAUTHENTICATED');
    for (const bad of [
      'garbage!',
      'bm90OmE=',
      Buffer.from('12:x y').toString('base64url'),
      'A'.repeat(300),
    ]) {
      expectCode(await t.gql(PAGE, { c: conv, before: bad }, ann), 'VALIDATION');
    }
    const c = encodeCursor({ at: Date.now(), id: newId() });
    expectCode(await t.gql(PAGE, { c: conv, before: c, after: c }, ann), 'VALIDATION');
    expectCode(await t.gql(PAGE, { c: conv, limit: 0 }, ann), 'VALIDATION');
    expectCode(await t.gql(PAGE, { c: conv, limit: 101 }, ann), 'VALIDATION');
    // A well-formed cursor of somewhere else just positions the page; the conversation is checked.
    expectCode(await t.gql(PAGE, { c: conv, before: c }, cy), 'NOT_FOUND');
  });

  it('reads a page in a fixed number of queries, whatever its length (no N+1)', async () => {
    // The sends' outbox rows and notifications are written in the background after commit:
    // not the page's cost.
    await t.ctx.outbox.flush();
    await t.ctx.services.notifications.settled();
    const small = await countQueries(() => page({ limit: 2 }));
    const large = await countQueries(() => page({ limit: 13 }));
    expect(small).toBeGreaterThan(1);
    expect(large).toBe(small);
  });

  it('walks the (conversationId, createdAt, id) index for a page (EXPLAIN)', async () => {
    // Enough rows in enough conversations that a planner prefers the index to a scan.
    const db = t.ctx.db.kysely;
    const convIds = Array.from({ length: 40 }, () => newId());
    const now = clock.now().getTime();
    await db
      .insertInto('conversation')
      .values(
        convIds.map((id) => ({
          id,
          workspaceId: DIRECT_SPACE_ID,
          kind: 'group' as const,
          name: null,
          topic: null,
          isPrivate: 1,
          encrypted: 0,
          archivedAt: null,
          createdBy: ann.id,
          createdAt: now,
          lastActivityAt: now,
        })),
      )
      .execute();
    for (const cid of convIds) {
      await db
        .insertInto('message')
        .values(
          Array.from({ length: 100 }, (_, i) => ({
            id: newId(),
            conversationId: cid,
            workspaceId: DIRECT_SPACE_ID,
            authorId: ann.id,
            text: `bulk ${i}`,
            ciphertext: null,
            threadRootId: null,
            forwardedFromId: null,
            createdAt: now - i,
            editedAt: null,
            deletedAt: null,
            deletedBy: null,
            replyCount: 0,
            lastReplyAt: null,
            mentions: null,
          })),
        )
        .execute();
    }
    const compiled = messagePageQuery(db, {
      conversationId: convIds[7]!,
      threadRootId: null,
      before: { at: now, id: newId() },
      take: 51,
    });
    // Only the tables read here: the whole database holds every parallel test's schema, and
    // analyzing all of it can outlast the statement budget on a busy machine.
    if (TEST_DB === 'postgres') await sql`analyze message, conversation`.execute(db);
    const prefix = TEST_DB === 'postgres' ? 'explain ' : 'explain query plan ';
    const res = await db.executeQuery(
      CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]),
    );
    const plan = (res.rows as Array<Record<string, unknown>>)
      .map((r) => String(r['QUERY PLAN'] ?? r.detail))
      .join('\n');
    expect(plan).toMatch(/message_conversation_time_idx/);
    expect(plan).not.toMatch(/Seq Scan|SCAN message(?! USING)/);
    // The order comes from the index: no separate sort step.
    expect(plan).not.toMatch(/^\s*Sort\b|USE TEMP B-TREE FOR ORDER BY/m);
  });
});
