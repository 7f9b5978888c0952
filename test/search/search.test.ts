import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_ACTOR, type UserActor } from '../../src/auth/actor.js';
import { ManualClock, MINUTE_MS } from '../../src/lib/clock.js';
import { SearchService, type SearchServiceDeps } from '../../src/services/search/search-service.js';
import { agentHeaders, createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import {
  conversationOf,
  createWorkspace,
  expectCode,
  inviteAndJoin,
  ok,
  send,
} from '../conversations/_helpers.js';
import { cli, seedConversation } from '../moderation/_helpers.js';

import { MESSAGES, QUERIES } from './labelled-set.js';

const SEARCH = `query($q: String!, $f: MessageSearchFilter, $after: String, $limit: Int) {
  searchMessages(query: $q, filter: $f, after: $after, limit: $limit) {
    items { message { id text threadRootId } highlights { start length } } hasMore nextCursor } }`;
const EDIT = 'mutation($m: ID!, $t: String!) { editMessage(messageId: $m, text: $t) { id } }';
const DELETE = 'mutation($m: ID!) { deleteMessage(messageId: $m) { id } }';
const CHANNELS = 'query($s: ID!) { channels(serverId: $s) { id name } }';
const CREATE_ATTACHMENT = `mutation($c: ID!, $n: String!) {
  createAttachment(input: { conversationId: $c, fileName: $n, contentType: "text/plain" }) { attachmentId uploadToken } }`;
const FINALIZE = `mutation($a: ID!, $m: ID!) {
  finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }`;
const CREATE_CHANNEL = 'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }';

describe('search', () => {
  const clock = new ManualClock(Date.parse('2030-03-01T00:00:00Z'));
  let t: TestApp;
  let ann: Agent, bob: Agent, cy: Agent;
  let serverId: string, general: string, secret: string;
  const ids: Record<string, string> = {};

  async function search(agent: Agent, q: string, f?: Record<string, unknown>, extra = {}) {
    return ok(await t.gql(SEARCH, { q, f, ...extra }, agent)).searchMessages as {
      items: Array<{ message: { id: string; text: string }; highlights: any[] }>;
      hasMore: boolean;
      nextCursor: string | null;
    };
  }
  const found = async (agent: Agent, q: string, f?: Record<string, unknown>) =>
    (await search(agent, q, f)).items.map((i) => i.message.id);

  beforeAll(async () => {
    t = await createTestApp({ clock });
    [ann, bob, cy] = await Promise.all(
      ['ann', 'bob', 'cy'].map((u) => signUpAndIn(t, { username: `${u}srch` })),
    );
    serverId = (await createWorkspace(t, ann, 'Recherche')).id;
    await inviteAndJoin(t, ann, serverId, [bob]);
    const channels = ok(await t.gql(CHANNELS, { s: serverId }, ann)).channels;
    general = channels.find((c: any) => c.name === 'general').id;
    secret = ok(
      await t.gql(CREATE_CHANNEL, { i: { serverId, name: 'secret', isPrivate: true } }, ann),
    ).createChannel.id;
    for (const [key, text] of Object.entries(MESSAGES)) {
      clock.advance(MINUTE_MS);
      ids[key] = (await send(t, key.startsWith('ko') ? bob : ann, general, text)).id;
    }
  });
  afterAll(async () => t?.close());

  it('finds exactly the labelled messages of every query (recall and precision 1)', async () => {
    const keyOf = new Map(Object.entries(ids).map(([k, id]) => [id, k]));
    for (const { query, expect: want } of QUERIES) {
      const got = (await found(bob, query, { conversationId: general }))
        .map((id) => keyOf.get(id))
        .sort();
      expect({ query, got }).toEqual({ query, got: [...want].sort() });
    }
  });

  it('highlights the matched ranges of the original text', async () => {
    const [hit] = (await search(ann, 'cafe noel', { conversationId: general })).items;
    const text = MESSAGES.fr1!;
    const parts = hit!.highlights.map((h) => text.slice(h.start, h.start + h.length));
    expect(parts).toEqual(['café', 'Noël']);
    const [ja] = (await search(ann, '東京都')).items;
    expect(ja!.highlights.map((h) => MESSAGES.ja1!.slice(h.start, h.start + h.length))).toEqual([
      '東京都',
    ]);
    const [de] = (await search(ann, 'strasse', { authorId: ann.id, conversationId: general }))
      .items;
    expect(de!.highlights.length).toBe(1);
  });

  it('finds only what the caller may read', async () => {
    await send(t, ann, secret, 'zebra in the private channel');
    expect(await found(ann, 'zebra')).toHaveLength(1);
    // bob is in the workspace but not in the private channel; cy is in neither.
    expect(await found(bob, 'zebra')).toEqual([]);
    expect(await found(cy, 'review')).toEqual([]);
    // A direct conversation: its two members only.
    const dm = (await conversationOf(t, ann, [bob])).conversation.id as string;
    await send(t, ann, dm, 'giraffe spotted');
    expect(await found(bob, 'giraffe')).toHaveLength(1);
    expect(await found(cy, 'giraffe')).toEqual([]);
  });

  it('never finds messages of encrypted conversations, even if their rows had text', async () => {
    const enc = await seedConversation(t, { kind: 'direct', members: [ann, cy] });
    await t.ctx.db.kysely
      .updateTable('conversation')
      .set({ encrypted: 1 })
      .where('id', '=', enc)
      .execute();
    await t.ctx.db.kysely
      .insertInto('message')
      .values({
        id: '01900000-0000-7000-8000-00000000e2ee',
        conversationId: enc,
        workspaceId: '00000000-0000-7000-8000-000000000000',
        authorId: ann.id,
        text: 'okapi ciphertext stand-in',
        ciphertext: 'x',
        threadRootId: null,
        forwardedFromId: null,
        createdAt: clock.now().getTime(),
        editedAt: null,
        deletedAt: null,
        deletedBy: null,
        replyCount: 0,
        lastReplyAt: null,
        mentions: null,
      })
      .execute();
    await t.ctx.services.search.reindex(CLI_ACTOR, 7);
    expect(await found(ann, 'okapi')).toEqual([]);
    const row = await t.ctx.db.kysely
      .selectFrom('message_search')
      .select('messageId')
      .where('messageId', '=', '01900000-0000-7000-8000-00000000e2ee')
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });

  it('follows edits and deletions in the same transaction', async () => {
    const m = await send(t, ann, general, 'walrus sighting');
    expect(await found(bob, 'walrus')).toEqual([m.id]);
    ok(await t.gql(EDIT, { m: m.id, t: 'narwhal sighting' }, ann));
    expect(await found(bob, 'walrus')).toEqual([]);
    expect(await found(bob, 'narwhal')).toEqual([m.id]);
    ok(await t.gql(DELETE, { m: m.id }, ann));
    expect(await found(bob, 'narwhal')).toEqual([]);
    expect(await found(bob, 'sighting')).toEqual([]);
  });

  it('drops the terms of an account purge', async () => {
    const dan = await signUpAndIn(t, { username: 'dansrch' });
    await inviteAndJoin(t, ann, serverId, [dan]);
    await send(t, dan, general, 'platypus facts');
    expect(await found(ann, 'platypus')).toHaveLength(1);
    await t.ctx.db.transaction((tx) =>
      t.ctx.services.messages.removal.purgeAuthor(tx, dan.id, clock.now().getTime()),
    );
    expect(await found(ann, 'platypus')).toEqual([]);
    const left = await t.ctx.db.kysely
      .selectFrom('message_search as s')
      .innerJoin('message as m', 'm.id', 's.messageId')
      .select('s.messageId')
      .where('m.authorId', '=', dan.id)
      .execute();
    expect(left).toEqual([]);
  });

  it('applies filters', async () => {
    const root = await send(t, ann, general, 'lemur thread start');
    clock.advance(MINUTE_MS);
    const reply = await send(t, bob, general, 'lemur reply', root.id);
    const other = ok(await t.gql(CHANNELS, { s: serverId }, ann)).channels.find(
      (c: any) => c.name === 'random',
    ).id;
    clock.advance(MINUTE_MS);
    const elsewhere = await send(t, ann, other, 'lemur elsewhere');
    expect(await found(ann, 'lemur')).toEqual([elsewhere.id, reply.id, root.id]);
    expect(await found(ann, 'lemur', { inThread: true })).toEqual([reply.id]);
    expect(await found(ann, 'lemur', { inThread: false })).toEqual([elsewhere.id, root.id]);
    expect(await found(ann, 'lemur', { authorId: bob.id })).toEqual([reply.id]);
    expect(await found(ann, 'lemur', { conversationId: other })).toEqual([elsewhere.id]);
    expect(await found(ann, 'lemur', { serverId: '00000000-0000-7000-8000-000000000000' })).toEqual(
      [],
    );
    const at = new Date(clock.now().getTime()).toISOString();
    expect(await found(ann, 'lemur', { from: at })).toEqual([elsewhere.id]);
    expect(await found(ann, 'lemur', { to: at })).toEqual([reply.id, root.id]);
  });

  it('filters on having an attachment: finalized on the message, through the upload', async () => {
    /** Creates and uploads a text file in `general`; returns its id, not yet finalized. */
    const uploaded = async (name: string) => {
      const a = ok(await t.gql(CREATE_ATTACHMENT, { c: general, n: name }, ann)).createAttachment;
      const b = 'srchboundary';
      const body = Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="upload_token"\r\n\r\n${a.uploadToken}\r\n` +
          `--${b}\r\nContent-Disposition: form-data; name="attachment_id"\r\n\r\n${a.attachmentId}\r\n` +
          `--${b}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
          `Content-Type: text/plain\r\n\r\nminutes of the meeting\r\n--${b}--\r\n`,
      );
      const res = await t.inject({
        method: 'POST',
        url: '/api/files/upload',
        headers: { 'content-type': `multipart/form-data; boundary=${b}`, ...agentHeaders(ann) },
        payload: body,
      });
      expect(res.statusCode).toBe(200);
      return a.attachmentId as string;
    };
    const withFile = await send(t, ann, general, 'ibex minutes attached');
    ok(await t.gql(FINALIZE, { a: await uploaded('minutes.txt'), m: withFile.id }, ann));
    clock.advance(MINUTE_MS);
    const plain = await send(t, ann, general, 'ibex minutes to follow');
    // Uploaded but never finalized: it names no message, so `plain` still has no attachment.
    await uploaded('draft.txt');
    expect(await found(bob, 'ibex')).toEqual([plain.id, withFile.id]);
    expect(await found(bob, 'ibex', { hasAttachment: true })).toEqual([withFile.id]);
    expect(await found(bob, 'ibex', { hasAttachment: false })).toEqual([plain.id]);
    expect(await found(bob, 'ibex', { hasAttachment: true, authorId: bob.id })).toEqual([]);
  });

  it('pages newest first with a cursor', async () => {
    const sent: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      sent.push((await send(t, ann, general, `quokka number ${i}`)).id);
    }
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await search(ann, 'quokka', undefined, { after, limit: 2 });
      seen.push(...page.items.map((i) => i.message.id));
      if (!page.hasMore) break;
      after = page.nextCursor;
    }
    expect(seen).toEqual([...sent].reverse());
  });

  // Every page of some twenty queries, three or four ways: longer than most tests.
  it('gives the same pages both ways whether it sorts the matches or walks the messages', async () => {
    // The app's own service sorts here (every query has fewer matches than `sortedMax`); these
    // two walk every query, one to the end, one handing over to sorting after three messages.
    const deps = (tuning: SearchServiceDeps['tuning']) =>
      new SearchService({
        db: t.ctx.db,
        workspaces: t.ctx.services.workspaces,
        channels: t.ctx.services.channels,
        authz: t.ctx.services.authz,
        heldTerms: t.ctx.services.search.held,
        tuning,
      });
    const ways = {
      sorted: deps({ indexOrder: false }),
      // SQLite only (PostgreSQL has no such order): the matches in FTS5's time order (every
      // query here but prefixes and a named author), read from one row on, so reads stop
      // inside a millisecond of several messages (the clock stands still while some are sent).
      indexOrder: deps({ indexOrderFirst: 1 }),
      // On PostgreSQL: a low estimate, then a count of one or more, then the walk.
      walk: deps({
        sortedMax: { sqlite: 1, postgres: 1 },
        walkStep: 2,
        walkBudget: 1_000_000,
        indexOrder: false,
      }),
      // On PostgreSQL: an estimate of zero or more, so the walk without counting.
      handOver: deps({
        sortedMax: { sqlite: 1, postgres: 1 },
        estimatedSortedMax: 0,
        walkStep: 1,
        walkBudget: 3,
        indexOrder: false,
      }),
    };
    const actor = (a: Agent): UserActor => ({
      kind: 'user',
      accountId: a.id,
      sessionId: 'search-test',
      username: 'search-test',
      deviceId: null,
      homeServer: null,
      viaOperatorSession: false,
    });
    /**
     * Every page of a search, two at a time, as ids; then back from the last page to the first
     * (`before` its prevCursor, on with each nextCursor), flattened.
     */
    const pages = async (way: SearchService, a: Agent, query: string, f: object = {}) => {
      const out: string[][] = [];
      let after: string | null = null;
      let before: string | null = null;
      do {
        const page = await way.messages(actor(a), { query, ...f, after, limit: 2 });
        out.push(page.items.map((i) => i.message.id));
        after = page.nextCursor;
        before = page.prevCursor;
      } while (after);
      const back: string[][] = [];
      while (before) {
        const page = await way.messages(actor(a), { query, ...f, before, limit: 2 });
        back.unshift(page.items.map((i) => i.message.id));
        before = page.nextCursor;
      }
      expect(back.flat()).toEqual(out.slice(0, -1).flat());
      return { out, back };
    };
    for (let i = 0; i < 4; i += 1) await send(t, bob, general, `tapir ${i}`);
    clock.advance(MINUTE_MS);
    await send(t, ann, general, 'tapir later');
    const cases: Array<[Agent, string, object]> = [
      ...QUERIES.map(({ query }): [Agent, string, object] => [bob, query, {}]),
      [ann, 'lemur', {}],
      [ann, 'lemur', { inThread: false }],
      [bob, 'ibex', { hasAttachment: true }],
      [ann, 'zebra', {}],
      [bob, 'zebra', {}],
      [cy, 'review', {}],
      [ann, 'quokka', { authorId: ann.id }],
      // Five messages of one millisecond (the clock stands still), then one more.
      [ann, 'quokka', {}],
      [bob, 'tapir', {}],
      // A prefix walks a first step before counting, then goes on either way from there.
      [ann, 'quok*', {}],
      [bob, 'revi*', {}],
      [ann, 'lem* -draft', {}],
    ];
    for (const [a, query, f] of cases) {
      const want = await pages(ways.sorted, a, query, f);
      if (t.ctx.db.dialect === 'sqlite') {
        expect({ query, f, got: await pages(ways.indexOrder, a, query, f) }).toEqual({
          query,
          f,
          got: want,
        });
      }
      expect({ query, f, got: await pages(ways.walk, a, query, f) }).toEqual({
        query,
        f,
        got: want,
      });
      expect({ query, f, got: await pages(ways.handOver, a, query, f) }).toEqual({
        query,
        f,
        got: want,
      });
    }
  }, 120_000);

  it('answers VALIDATION for bad input and nothing for a query without a word', async () => {
    expect((await search(ann, '!!! ...')).items).toEqual([]);
    expectCode(await t.gql(SEARCH, { q: 'x'.repeat(501) }, ann), 'VALIDATION');
    expectCode(await t.gql(SEARCH, { q: 'a', limit: 0 }, ann), 'VALIDATION');
    expectCode(await t.gql(SEARCH, { q: 'a', after: 'forged!' }, ann), 'VALIDATION');
  });

  it('indexes messages older than the index in batches by the backfill job', async () => {
    // As just after migration 0011: messages without index rows, and the backfill to do.
    await t.ctx.db.kysely.deleteFrom('message_search').execute();
    await t.ctx.db.kysely.deleteFrom('search_backfill').execute();
    await t.ctx.db.kysely
      .insertInto('search_backfill')
      .values({ id: 'messages', afterAt: null, afterId: null })
      .execute();
    expect(await found(bob, 'review')).toEqual([]);
    // One batch of three: the oldest messages (en1, en2, en3) only, and the position kept.
    expect(await t.ctx.services.search.backfill(1, 3)).toBe(false);
    expect(await found(bob, 'review')).toEqual([ids.en3, ids.en1]);
    expect(await found(bob, 'cafe')).toEqual([]);
    const state = await t.ctx.db.kysely.selectFrom('search_backfill').selectAll().execute();
    expect(state).toEqual([{ id: 'messages', afterAt: expect.anything(), afterId: ids.en3 }]);
    // The job takes it from there to the end, and then has nothing left to do.
    expect(await t.ctx.scheduler.runOnce('search-backfill')).toBe(true);
    expect(await found(bob, 'cafe')).toEqual([ids.fr2, ids.fr1]);
    expect(await t.ctx.db.kysely.selectFrom('search_backfill').selectAll().execute()).toEqual([]);
    expect(await t.ctx.services.search.backfill(1, 3)).toBe(true);
  });

  it('rebuilds the index with svc search reindex', async () => {
    await t.ctx.db.kysely.deleteFrom('message_search').execute();
    expect(await found(bob, 'report')).toEqual([]);
    const res = await cli(t, ['search', 'reindex', '--batch', '3']);
    expect(res.code).toBe(0);
    expect(await found(bob, 'report')).toEqual([ids.en2, ids.en1]);
    expect(await found(bob, 'narwhal')).toEqual([]);
  });

  it('finds members, channels and workspaces by folded name prefix', async () => {
    const zoe = await signUpAndIn(t, { username: 'zoesrch' });
    await t.ctx.db.kysely
      .updateTable('account')
      .set({ displayName: 'Zoë Dupont 東京' })
      .where('id', '=', zoe.id)
      .execute();
    await inviteAndJoin(t, ann, serverId, [zoe]);
    const members = async (q: string) =>
      ok(
        await t.gql(
          'query($s: ID!, $q: String!) { searchMembers(serverId: $s, query: $q) { user { id } } }',
          { s: serverId, q },
          bob,
        ),
      ).searchMembers.map((m: any) => m.user.id);
    expect(await members('zoe')).toEqual([zoe.id]);
    expect(await members('DUP zo')).toEqual([zoe.id]);
    expect(await members('東')).toEqual([zoe.id]);
    expect(await members('dupond')).toEqual([]);
    expect(await members('annsr')).toEqual([ann.id]);
    expect(await members('')).toEqual([]);
    // cy is not in the workspace.
    expectCode(
      await t.gql(
        'query($s: ID!, $q: String!) { searchMembers(serverId: $s, query: $q) { user { id } } }',
        { s: serverId, q: 'zoe' },
        cy,
      ),
      'NOT_FOUND',
    );
    const channels = async (agent: Agent, q: string) =>
      ok(
        await t.gql(
          'query($s: ID!, $q: String!) { searchChannels(serverId: $s, query: $q) { name } }',
          { s: serverId, q },
          agent,
        ),
      ).searchChannels.map((c: any) => c.name);
    expect(await channels(ann, 'gen')).toEqual(['general']);
    expect(await channels(ann, 'SEC')).toEqual(['secret']);
    // A private channel the caller is not in is never listed.
    expect(await channels(bob, 'sec')).toEqual([]);
    const workspaces = async (agent: Agent, q: string) =>
      ok(
        await t.gql('query($q: String!) { searchWorkspaces(query: $q) { id } }', { q }, agent),
      ).searchWorkspaces.map((w: any) => w.id);
    expect(await workspaces(bob, 'rech')).toEqual([serverId]);
    expect(await workspaces(cy, 'rech')).toEqual([]);
  });
});
