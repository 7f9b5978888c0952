import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR } from '../../src/auth/actor.js';
import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { parseQuery } from '../../src/services/search/query-grammar.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  conversationOf,
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  send,
  setRole,
} from '../conversations/_helpers.js';
import { cli } from '../moderation/_helpers.js';

// The query grammar, the operators, public channels one has not joined, highlights of inflected
// forms, excerpts, the fallback language and a resumed rebuild (docs/search.md).

const SEARCH = `query($q: String!, $f: MessageSearchFilter) {
  searchMessages(query: $q, filter: $f, limit: 100) {
    items { message { id text } highlights { start length } joined
      excerpt { text start end highlights { start length } } } } }`;
const CREATE_CHANNEL = 'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }';
const CHANNELS = 'query($s: ID!) { channels(serverId: $s) { id name } }';
const LANGUAGE = 'mutation($l: String, $s: ID) { setSearchLanguage(language: $l, serverId: $s) }';

describe('the query grammar (parser)', () => {
  it('reads words, phrases, prefixes, exclusions and operators in any combination', () => {
    const q = parseQuery(
      '"deploy failed" report* -draft from:@ann in:#ops after:2030-01-01 before:2030-02-01 has:link has:file is:thread',
    );
    expect(q.phrases).toEqual([['deploy', 'failed']]);
    expect(q.prefixes).toEqual(['report']);
    expect(q.excluded).toContain('draft');
    expect(q.from).toEqual(['ann']);
    expect(q.in).toEqual(['#ops']);
    expect(q.since).toBe(Date.parse('2030-01-02T00:00:00Z'));
    expect(q.until).toBe(Date.parse('2030-02-01T00:00:00Z'));
    expect(q.hasFile).toBe(true);
    expect(q.isThread).toBe(true);
    expect(q.groups).toContainEqual(['¶link']);
    // on: a day, or a month; text with colons that names no operator stays text.
    expect([parseQuery('on:2030-03').since, parseQuery('on:2030-03').until]).toEqual([
      Date.parse('2030-03-01T00:00:00Z'),
      Date.parse('2030-04-01T00:00:00Z'),
    ]);
    expect(parseQuery('at 10:30 see https://x.example').groups.map((g) => g[0])).toEqual([
      'at',
      '10',
      '30',
      'see',
      'https',
      'x',
      'example',
    ]);
  });

  it('answers a malformed query with what to write instead', () => {
    const cases: Array<[string, RegExp]> = [
      ['"open phrase', /quote at character 1 is not closed/],
      ['has:pizza', /has: takes file or link/],
      ['is:open', /is: takes thread/],
      ['before:2030-02-30', /before: needs a date like before:2030-03-01|before: needs a date/],
      ['on:yesterday', /on: needs a date like on:2026-03-01 \(or a month/],
      ['d*', /a prefix needs at least two letters/],
      ['from:', /from: needs a person/],
      ['in:#', /in: needs a channel or a person/],
      ['-"a phrase"', /exclude words one at a time/],
      ['after:2030-02-01 before:2030-01-01', /leave no day/],
    ];
    for (const [query, message] of cases) {
      expect(() => parseQuery(query), query).toThrow(message);
    }
  });
});

describe('search operators, unjoined channels, highlights', () => {
  const clock = new ManualClock(Date.parse('2030-05-01T12:00:00Z'));
  let t: TestApp;
  let ann: Agent, bob: Agent, cy: Agent;
  let serverId: string, general: string, random: string, announce: string, hidden: string;
  const ids: Record<string, string> = {};

  const search = async (agent: Agent, q: string, f?: Record<string, unknown>) =>
    ok(await t.gql(SEARCH, { q, f }, agent)).searchMessages.items as Array<{
      message: { id: string; text: string };
      highlights: Array<{ start: number; length: number }>;
      joined: boolean;
      excerpt: {
        text: string;
        start: number;
        end: number;
        highlights: Array<{ start: number; length: number }>;
      };
    }>;
  const found = async (agent: Agent, q: string, f?: Record<string, unknown>) =>
    (await search(agent, q, f)).map((i) => i.message.id);

  beforeAll(async () => {
    t = await createTestApp({ clock });
    [ann, bob, cy] = await Promise.all(
      ['ann', 'bob', 'cy'].map((u) => signUpAndIn(t, { username: `${u}gram` })),
    );
    serverId = (await createWorkspace(t, ann, 'Grammar')).id;
    await inviteAndJoin(t, ann, serverId, [bob, cy]);
    ok(await setRole(t, ann, serverId, cy.id, 'GUEST'));
    const channels = ok(await t.gql(CHANNELS, { s: serverId }, ann)).channels;
    general = channels.find((c: any) => c.name === 'general').id;
    random = channels.find((c: any) => c.name === 'random').id;
    const create = async (name: string, isPrivate: boolean) =>
      ok(await t.gql(CREATE_CHANNEL, { i: { serverId, name, isPrivate } }, ann)).createChannel
        .id as string;
    announce = await create('announce', false);
    hidden = await create('hidden', true);
    const put = async (key: string, agent: Agent, conv: string, text: string, root?: string) => {
      clock.advance(MINUTE_MS);
      ids[key] = (await send(t, agent, conv, text, root)).id;
    };
    await put('a', ann, general, 'The deploy failed again during the night');
    await put('b', bob, general, 'It failed to deploy the build, see https://ci.example/42');
    await put('c', ann, random, 'Deployment notes are in the draft');
    await put('d', bob, general, 'Reporting the outage now', ids.a);
    clock.set(Date.parse('2030-05-03T09:00:00Z'));
    await put('e', ann, announce, 'Quarterly report published for everyone');
    await put('f', ann, hidden, 'Private report for the board');
    const dm = (await conversationOf(t, ann, [bob])).conversation.id as string;
    await put('g', ann, dm, 'Your report draft looks good');
  });
  afterAll(async () => t?.close());

  it('finds phrases side by side, prefixes, and leaves out excluded words', async () => {
    expect(await found(ann, '"deploy failed"')).toEqual([ids.a]);
    expect(await found(ann, 'deploy failed')).toEqual([ids.b, ids.a]);
    expect(await found(ann, 'deplo*')).toEqual([ids.c, ids.b, ids.a]);
    expect(await found(ann, 'deploy -draft')).toEqual([ids.b, ids.a]);
    expect(await found(ann, 'deploy -night -build')).toEqual([ids.c]);
  });

  it('applies every operator, alone and together', async () => {
    expect(await found(ann, `from:@${bob.username}`)).toEqual([ids.d, ids.b]);
    expect(await found(ann, 'deploy in:#random')).toEqual([ids.c]);
    expect(await found(ann, `report in:@${bob.username}`)).toEqual([ids.g]);
    expect(await found(ann, 'has:link')).toEqual([ids.b]);
    expect(await found(ann, 'is:thread')).toEqual([ids.d, ids.a]);
    expect(await found(ann, 'report on:2030-05-03')).toEqual([ids.g, ids.f, ids.e]);
    expect(await found(ann, 'report before:2030-05-03')).toEqual([ids.d]);
    expect(await found(ann, 'after:2030-04-30 before:2030-05-02 deploy')).toEqual([
      ids.c,
      ids.b,
      ids.a,
    ]);
    expect(
      await found(ann, `deploy* from:@${bob.username} in:#general has:link on:2030-05`),
    ).toEqual([ids.b]);
    // An operator that contradicts a filter given beside it leaves nothing.
    expect(await found(ann, `from:@${bob.username}`, { authorId: ann.id })).toEqual([]);
    expectCode(await t.gql(SEARCH, { q: 'from:@nobodyhere' }, ann), 'VALIDATION');
    expectCode(await t.gql(SEARCH, { q: 'in:#nowhere' }, ann), 'VALIDATION');
    // A private channel one is not in is not confirmed by name.
    expectCode(await t.gql(SEARCH, { q: 'in:#hidden' }, bob), 'VALIDATION');
    expectCode(await t.gql(SEARCH, { q: 'report has:pizza' }, ann), 'VALIDATION');
  });

  it('searches public channels one has not joined, marked so; never private ones, nor for guests', async () => {
    const bobs = await search(bob, 'report');
    expect(bobs.map((i) => i.message.id)).toEqual([ids.g, ids.e, ids.d]);
    expect(bobs.map((i) => i.joined)).toEqual([true, false, true]);
    expect((await search(ann, 'quarterly')).map((i) => i.joined)).toEqual([true]);
    // A guest finds only what they are a member of (#general, not #announce).
    expect(await found(cy, 'report')).toEqual([ids.d]);
    expect(await found(cy, 'quarterly')).toEqual([]);
  });

  it('highlights the inflected form as written, with an excerpt of a long text', async () => {
    const [hit] = await search(ann, 'report in:#general');
    expect(hit!.message.id).toBe(ids.d);
    const text = hit!.message.text;
    expect(hit!.highlights.map((h) => text.slice(h.start, h.start + h.length))).toEqual([
      'Reporting',
    ]);
    const long = `${'Wir haben heute lange auf die Antwort gewartet. '.repeat(6)}Die Donaudampfschifffahrtsgesellschaft meldet Verspätung. ${'Bis morgen früh. '.repeat(20)}`;
    clock.advance(MINUTE_MS);
    const m = await send(t, ann, general, long);
    const [de] = await search(ann, 'schiff');
    expect(de!.message.id).toBe(m.id);
    expect(de!.highlights.map((h) => long.slice(h.start, h.start + h.length))).toEqual([
      'Donaudampfschifffahrtsgesellschaft',
    ]);
    const ex = de!.excerpt;
    expect(ex.start).toBeGreaterThan(0);
    expect(ex.end).toBeLessThan(long.length);
    expect(ex.text).toBe(long.slice(ex.start, ex.end));
    expect(ex.text.length).toBeLessThanOrEqual(240);
    expect(ex.highlights.map((h) => ex.text.slice(h.start, h.start + h.length))).toEqual([
      'Donaudampfschifffahrtsgesellschaft',
    ]);
  });

  it("stems a short text in its author's language, else the workspace's", async () => {
    expectCode(await t.gql(LANGUAGE, { l: 'xx' }, bob), 'VALIDATION');
    expectCode(await t.gql(LANGUAGE, { l: 'sv', s: serverId }, bob), 'FORBIDDEN');
    ok(await t.gql(LANGUAGE, { l: 'sv', s: serverId }, ann));
    clock.advance(MINUTE_MS);
    const sv = await send(t, bob, random, 'Huset brinner');
    expect(await found(ann, 'hus in:#random')).toEqual([sv.id]);
    ok(await t.gql(LANGUAGE, { l: 'de' }, bob));
    expect(ok(await t.gql('{ searchLanguage }', {}, bob)).searchLanguage).toBe('de');
    clock.advance(MINUTE_MS);
    const de = await send(t, bob, random, 'Häuser brennen');
    expect(await found(ann, 'haus in:#random')).toEqual([de.id]);
  });

  it('rebuilds the index resumably, with progress, serving the old rows meanwhile', async () => {
    // Strip every row back to its exact words (an index made before stems existed).
    const rows = await t.ctx.db.kysely.selectFrom('message_search').selectAll().execute();
    for (const r of rows) {
      const exact = r.terms.split(' ').filter((x) => !/^[¡-´¶]/.test(x));
      await t.ctx.db.kysely
        .updateTable('message_search')
        .set({ terms: exact.join(' ') })
        .where('messageId', '=', r.messageId)
        .execute();
    }
    // Exact words are still found; "Reporting" needs its stem, which the old row lacks.
    expect(await found(ann, 'quarterly')).toEqual([ids.e]);
    expect(await found(ann, 'reports')).toEqual([ids.g, ids.f, ids.e]);
    // A rebuild stopped after its first batch of two: the position is kept ...
    const oldest = await t.ctx.db.kysely
      .selectFrom('message')
      .select(['id', 'createdAt'])
      .orderBy('createdAt')
      .orderBy('id')
      .limit(2)
      .execute();
    await t.ctx.db.kysely.deleteFrom('search_backfill').execute();
    await t.ctx.db.kysely
      .insertInto('search_backfill')
      .values({ id: 'messages', afterAt: oldest[1]!.createdAt, afterId: oldest[1]!.id })
      .execute();
    // ... and `svc search reindex` resumes from it.
    const res = await cli(t, ['search', 'reindex', '--batch', '3']);
    expect(res.code).toBe(0);
    expect(res.err).toMatch(/search reindex \(resumed\): \d+ of \d+ messages \(100%\)/);
    expect(await found(ann, 'reports')).toEqual([ids.g, ids.f, ids.e, ids.d]);
    expect(await t.ctx.db.kysely.selectFrom('search_backfill').selectAll().execute()).toEqual([]);
    expect(await t.ctx.services.search.reindex(CLI_ACTOR, 50)).toBeGreaterThan(0);
  });

  it('serves searches between the batches of a rebuild, and resumes one stopped half-way', async () => {
    const rows = await t.ctx.db.kysely.selectFrom('message_search').selectAll().execute();
    for (const r of rows) {
      const exact = r.terms.split(' ').filter((x) => !/^[¡-´¶]/.test(x));
      await t.ctx.db.kysely
        .updateTable('message_search')
        .set({ terms: exact.join(' ') })
        .where('messageId', '=', r.messageId)
        .execute();
    }
    // A rebuild in batches of one that stops (as a crash would) after its second batch; a search
    // between batches is answered from the rows as they are, the exact words throughout.
    const seen: number[] = [];
    await expect(
      t.ctx.services.search.reindex(CLI_ACTOR, 1, async ({ done }) => {
        seen.push(done);
        expect(await found(ann, 'quarterly')).toEqual([ids.e]);
        if (done === 2) throw new Error('stopped');
      }),
    ).rejects.toThrow('stopped');
    expect(seen).toEqual([1, 2]);
    // Run again, it starts after the two messages done and says so.
    const progress: Array<{ done: number; total: number; resumed: boolean }> = [];
    const rest = await t.ctx.services.search.reindex(CLI_ACTOR, 100, (p) => void progress.push(p));
    const all = await t.ctx.db.kysely
      .selectFrom('message')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(rest).toBe(Number(all.n) - 2);
    expect(progress.at(-1)).toEqual({ done: rest, total: rest, resumed: true });
    expect(await found(ann, 'reports')).toEqual([ids.g, ids.f, ids.e, ids.d]);
  });
});
