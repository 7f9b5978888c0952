import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { analyzeText } from '../../src/services/search/analyze.js';
import { analysisThreadAsked } from '../../src/services/search/analyzer.js';
import { HeldTerms } from '../../src/services/search/index.js';
import { createTestApp, TEST_DB, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { until } from '../_util/until.js';
import { ok, send, sharedChannel } from '../conversations/_helpers.js';

import { bareMessages, segments as countSegments, termsOf as rowTerms } from './_rows.js';

// New messages' index rows on SQLite are held for a write after their sends, a few hundred at a
// time (src/services/search/held-terms.ts, docs/search.md "What is indexed and when"): within a
// quarter of a second, or before any search of the process. A held row gives way to an edit or
// a delete made meanwhile, and rows a stop lost are written by the next start. A short text is
// held as it is and analyzed at the write, with the other held texts, on the analysis thread.
// On PostgreSQL a send writes its row itself.

const EDIT = 'mutation($m: ID!, $t: String!) { editMessage(messageId: $m, text: $t) { id } }';
const DELETE = 'mutation($m: ID!) { deleteMessage(messageId: $m) { id } }';
const LANGUAGE = 'mutation($l: String) { setSearchLanguage(language: $l) }';
const SEARCH = 'query($q: String!) { searchMessages(query: $q) { items { message { id } } } }';

describe('new messages’ index rows held for a later write', () => {
  let t: TestApp;
  let ann: Agent;
  let general: string;

  beforeAll(async () => {
    t = await createTestApp();
    ann = await signUpAndIn(t, { username: 'annheld' });
    general = await sharedChannel(t, ann, [], 'Held');
  });
  afterAll(async () => t?.close());

  const termsOf = (id: string) => rowTerms(t, id);
  const found = async (q: string) =>
    ok(await t.gql(SEARCH, { q }, ann)).searchMessages.items.map((i: any) => i.message.id);
  const bare = (n: number) => bareMessages(t, ann, general, n);
  /** Messages as a send holds them: with their author and workspace. */
  const messagesOf = async (list: Array<{ id: string; createdAt: number }>) => {
    const rows = await t.ctx.db.kysely
      .selectFrom('message')
      .select(['id', 'authorId', 'workspaceId'])
      .where(
        'id',
        'in',
        list.map((m) => m.id),
      )
      .execute();
    return list.map((m) => ({ ...m, ...rows.find((r) => r.id === m.id)! }));
  };
  /** Held rows written only when told (no timer within the test). */
  const heldByTest = () =>
    new HeldTerms(t.ctx.db, t.ctx.clock, pino({ level: 'silent' }), true, 60_000);

  it('finds a message by a search sent right after it', async () => {
    const m = await send(t, ann, general, 'pelican crossing the harbour');
    expect(await found('pelican')).toEqual([m.id]);
  });

  it('writes a sent message’s row within a second without a search', async () => {
    const m = await send(t, ann, general, 'cormorant drying its wings');
    await until(async () => (await termsOf(m.id)) !== null, 'the row', 1_000);
    expect(await termsOf(m.id)).toContain('cormorant');
  });

  describe.runIf(TEST_DB === 'postgres')('on PostgreSQL', () => {
    it('writes the row with the send', async () => {
      const m = await send(t, ann, general, 'albatross gliding');
      expect(t.ctx.services.search.held.size).toBe(0);
      expect(await termsOf(m.id)).toContain('albatross');
    });
  });

  describe.runIf(TEST_DB === 'sqlite')('on SQLite', () => {
    const segments = () => countSegments(t);

    it('holds the rows of several sends and writes them in one segment', async () => {
      const held = heldByTest();
      const list = await bare(5);
      await sql`insert into message_search_fts(message_search_fts) values ('optimize')`.execute(
        t.ctx.db.kysely,
      );
      expect(await segments()).toBe(1);
      for (const [i, m] of list.entries()) {
        await t.ctx.db.transaction((tx) => held.newMessage(tx, m, [`puffin${i}`, 'cliff']));
      }
      expect(held.size).toBe(5);
      for (const m of list) expect(await termsOf(m.id)).toBeNull();
      await held.flush();
      expect(held.size).toBe(0);
      for (const [i, m] of list.entries()) expect(await termsOf(m.id)).toBe(`puffin${i} cliff`);
      expect(await segments()).toBe(2);
    });

    it('holds short texts unanalyzed and analyzes them together at the write', async () => {
      const held = heldByTest();
      const texts = [
        'The quarterly reports were reviewed by the team',
        'Die Donaudampfschifffahrtsgesellschaft meldet heute neue Fahrpläne',
        '東京の会議は来週に延期されました',
        '- - -',
      ];
      const list = await messagesOf(await bare(texts.length));
      for (const [i, m] of list.entries()) {
        const text = texts[i]!;
        expect(held.takesText({ ...m, text })).toBe(true);
        await t.ctx.db.transaction(async (tx) => held.newText(tx, { ...m, text }));
      }
      expect(held.size).toBe(texts.length);
      // The server's own held texts (the sends above) written first, so only these are counted.
      await t.ctx.services.search.held.flush();
      const asked = analysisThreadAsked();
      await held.flush();
      // Analyzed at the write, on the analysis thread, with the terms a send's analysis gives.
      expect(analysisThreadAsked()).toBe(asked + texts.length);
      for (const [i, m] of list.slice(0, 3).entries()) {
        expect(await termsOf(m.id)).toBe(analyzeText(texts[i]!, null).join(' '));
      }
      expect(await termsOf(list[0]!.id)).toContain('¡report');
      // No word, no row.
      expect(await termsOf(list[3]!.id)).toBeNull();
    });

    it("analyzes a held short text in its author's language", async () => {
      const held = heldByTest();
      ok(await t.gql(LANGUAGE, { l: 'sv' }, ann));
      try {
        const [m] = await messagesOf(await bare(1));
        await t.ctx.db.transaction(async (tx) => held.newText(tx, { ...m!, text: 'Huset' }));
        await held.flush();
        expect(await termsOf(m!.id)).toBe(analyzeText('Huset', 'sv').join(' '));
        expect(analyzeText('Huset', 'sv')).not.toEqual(analyzeText('Huset', 'en'));
      } finally {
        ok(await t.gql(LANGUAGE, { l: null }, ann));
      }
    });

    it('analyzes a long text before its send, and holds its terms', async () => {
      const held = t.ctx.services.search.held;
      const long = `${'petrel '.repeat(143)}storm`;
      expect(long.length).toBeGreaterThan(1000);
      const now = t.ctx.clock.now().getTime();
      expect(held.takesText({ createdAt: now, text: long })).toBe(false);
      expect(held.takesText({ createdAt: now, text: long.slice(0, 1000) })).toBe(true);
      expect(held.takesText({ createdAt: now, text: null })).toBe(false);
      expect(held.takesText({ createdAt: now - 31_000, text: 'storm petrel' })).toBe(false);
      const m = await send(t, ann, general, long);
      expect(await found('storm')).toEqual([m.id]);
      expect(await termsOf(m.id)).toBe(analyzeText(long, null).join(' '));
    });

    it('keeps the terms of an edit made while the row was held', async () => {
      const held = heldByTest();
      const [m] = await bare(1);
      await t.ctx.db.transaction((tx) => held.newMessage(tx, m!, ['sent', 'words']));
      ok(await t.gql(EDIT, { m: m!.id, t: 'gannet diving' }, ann));
      await held.flush();
      expect(await termsOf(m!.id)).toContain('gannet');
      expect(await termsOf(m!.id)).not.toContain('sent');
    });

    it('gives no row to a message deleted while its row was held', async () => {
      const held = heldByTest();
      const [m] = await bare(1);
      await t.ctx.db.transaction((tx) => held.newMessage(tx, m!, ['tern', 'colony']));
      ok(await t.gql(DELETE, { m: m!.id }, ann));
      await held.flush();
      expect(await termsOf(m!.id)).toBeNull();
    });

    it('gives no row to a send that failed after holding it', async () => {
      const held = heldByTest();
      // The failed send's message was never written: its id names nothing.
      const never = { id: `never-${Date.now()}`, createdAt: t.ctx.clock.now().getTime() };
      await expect(
        t.ctx.db.transaction(async (tx) => {
          await held.newMessage(tx, never, ['skua']);
          throw new Error('the send fails after holding its row');
        }),
      ).rejects.toThrow('fails');
      expect(held.size).toBe(1);
      await held.flush();
      expect(held.size).toBe(0);
      expect(await termsOf(never.id)).toBeNull();
    });

    it('writes its own row for a message older than the holding age', async () => {
      const held = heldByTest();
      const [m] = await bare(1);
      const old = { id: m!.id, createdAt: m!.createdAt - 31_000 };
      await t.ctx.db.transaction((tx) => held.newMessage(tx, old, ['kittiwake']));
      expect(held.size).toBe(0);
      expect(await termsOf(m!.id)).toBe('kittiwake');
    });

    it('marks, with each write, the time before which every message has its row', async () => {
      const held = heldByTest();
      const [m] = await bare(1);
      await t.ctx.db.transaction((tx) => held.newMessage(tx, m!, ['shag']));
      const before = t.ctx.clock.now().getTime();
      await held.flush();
      const mark = Number(
        (
          await t.ctx.db.kysely
            .selectFrom('search_backfill')
            .select('afterAt')
            .where('id', '=', 'held')
            .executeTakeFirstOrThrow()
        ).afterAt,
      );
      // Sixty seconds back: twice the holding age.
      expect(mark).toBeGreaterThanOrEqual(before - 60_000);
      expect(mark).toBeLessThanOrEqual(t.ctx.clock.now().getTime() - 60_000);
    });

    it('writes on start the rows of messages sent since the mark, and only those', async () => {
      const recent = await send(t, ann, general, 'guillemot on the ledge');
      const older = await send(t, ann, general, 'razorbill on the ledge');
      await t.ctx.services.search.held.flush();
      // As a stop would leave them: rows never written, one message since the mark, one before.
      await t.ctx.db.kysely
        .deleteFrom('message_search')
        .where('messageId', 'in', [recent.id, older.id])
        .execute();
      await t.ctx.db.kysely
        .updateTable('search_backfill')
        .set({ afterAt: Date.parse(recent.createdAt) })
        .where('id', '=', 'held')
        .execute();
      await t.ctx.db.kysely
        .updateTable('message')
        .set({ createdAt: Date.parse(recent.createdAt) - 1 })
        .where('id', '=', older.id)
        .execute();
      expect(await t.ctx.services.search.held.recover()).toBe(1);
      expect(await termsOf(recent.id)).toContain('guillemot');
      expect(await termsOf(older.id)).toBeNull();
    });
  });
});
