import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';

import { conversationOf, createWorkspace, inviteAndJoin, ok } from './_helpers.js';

// A conversation's `members` and `memberIds` page (contract, Pagination): one list in the order
// people joined, the cursors of `members { cursor }` taken by both fields, a first page of 500
// for a caller that does not page, and bad arguments refused with VALIDATION in words.

describe('a conversation’s member list pages', () => {
  let t: TestApp;
  let erin: Agent;
  let pool: Agent[] = [];
  let serverId = '';
  let channel = '';
  let added = 0;

  const MEMBERS = `query($c: ID!, $a: String, $b: String, $l: Int) { conversation(id: $c) {
    members(after: $a, before: $b, limit: $l) { id cursor }
    memberIds(after: $a, before: $b, limit: $l) memberCount isMember } }`;

  interface Read {
    members: Array<{ id: string; cursor: string }>;
    memberIds: string[];
    memberCount: number;
    isMember: boolean;
  }
  const read = async (args: { a?: string; b?: string; l?: number }, as: Agent = erin) =>
    ok(await t.gql(MEMBERS, { c: channel, ...args }, as)).conversation as Read;
  const ids = (r: Read) => r.members.map((m) => m.id);

  /** Adds the next person of the pool to the channel (the newest member of its list). */
  const addOne = async () => {
    const next = pool[added++];
    if (!next) throw new Error('the pool of people to add is used up');
    ok(
      await t.gql(
        'mutation($c: ID!, $u: [ID!]!) { addChannelMembers(conversationId: $c, userIds: $u) { id } }',
        { c: channel, u: [next.id] },
        erin,
      ),
    );
  };

  beforeAll(async () => {
    t = await createTestApp();
    erin = await signUpAndIn(t);
    serverId = (await createWorkspace(t, erin, 'member-paging')).id;
    pool = [];
    for (let i = 0; i < 14; i++) pool.push(await signUpAndIn(t));
    await inviteAndJoin(t, erin, serverId, pool);
    channel = ok(
      await t.gql(
        'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }',
        { i: { serverId, name: 'paged-members', isPrivate: true } },
        erin,
      ),
    ).createChannel.id as string;
    for (let i = 0; i < 4; i++) await addOne();
  });
  afterAll(async () => t?.close());

  it('pages on with `after` and back with `before` while people join, ids and users alike', async () => {
    // On from the start, two at a time, someone added after each of the first three pages: each
    // is met at the end, every member exactly once; `memberIds` with the same cursor agrees.
    const seen: string[] = [];
    let page = await read({ l: 2 });
    let last = page;
    let joins = 0;
    while (page.members.length > 0) {
      expect(page.memberIds).toEqual(ids(page));
      seen.push(...ids(page));
      last = page;
      if (joins++ < 3) await addOne();
      page = await read({ a: page.members[page.members.length - 1]!.cursor, l: 2 });
    }
    const all = await read({});
    expect(seen).toEqual(ids(all));
    expect(all.memberIds).toEqual(ids(all));
    // erin and the 4 + 3 people added, erin first (she made the channel).
    expect(all.memberCount).toBe(8);
    expect(ids(all)).toHaveLength(8);
    expect(ids(all)[0]).toBe(erin.id);
    expect(ids(all).slice(1)).toEqual(pool.slice(0, 7).map((p) => p.id));

    // Back from the last member to the start, someone added (behind the cursor) between pages.
    const back: string[] = [];
    let cursor = last.members[last.members.length - 1]!.cursor;
    let pages = 0;
    for (;;) {
      const prev = await read({ b: cursor, l: 2 });
      if (prev.members.length === 0) break;
      expect(prev.memberIds).toEqual(ids(prev));
      back.unshift(...ids(prev));
      cursor = prev.members[0]!.cursor;
      await addOne();
      pages++;
    }
    expect(back).toEqual(ids(all).slice(0, -1));
    expect((await read({})).memberCount).toBe(8 + pages);
  });

  it('says where the caller stands and how many there are past the first page', async () => {
    // The newest member is not on a page of one, yet is a member, and the count is of everyone.
    const newest = pool[added - 1]!;
    const r = await read({ l: 1 }, newest);
    expect(r.members.map((m) => m.id)).toEqual([erin.id]);
    expect(r.isMember).toBe(true);
    expect(r.memberCount).toBe(added + 1);
    // Someone of the workspace not in the private channel cannot read it at all.
    const outsider = pool[pool.length - 1]!;
    const res = await t.gql(MEMBERS, { c: channel }, outsider);
    expect(res.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('gives a caller that does not page every member of a group conversation', async () => {
    const group = await conversationOf(t, erin, pool.slice(0, 3));
    const q = `query($c: ID!) { conversation(id: $c) { memberIds members { id } memberCount } }`;
    const g = ok(await t.gql(q, { c: group.conversation.id }, pool[0]!)).conversation;
    expect(new Set(g.memberIds)).toEqual(new Set([erin.id, ...pool.slice(0, 3).map((p) => p.id)]));
    expect(g.members.map((m: { id: string }) => m.id)).toEqual(g.memberIds);
    expect(g.memberCount).toBe(4);
  });

  it('pages the members of every channel of a list with the same arguments', async () => {
    const res = ok(
      await t.gql(
        `query($s: ID!) { channels(serverId: $s) { name memberCount
          memberIds(limit: 2) members(limit: 2) { id } } }`,
        { s: serverId },
        erin,
      ),
    ).channels as Array<{
      name: string;
      memberCount: number;
      memberIds: string[];
      members: Array<{ id: string }>;
    }>;
    expect(res.length).toBeGreaterThanOrEqual(3);
    for (const c of res) {
      expect(c.memberIds).toHaveLength(Math.min(2, c.memberCount));
      expect(c.members.map((m) => m.id)).toEqual(c.memberIds);
      expect(c.memberIds[0]).toBe(erin.id);
    }
    // #general holds everyone of the workspace: 15 in all, and a page of 2 of them.
    expect(res.find((c) => c.name === 'general')?.memberCount).toBe(15);
  });

  it('refuses bad paging arguments with VALIDATION in words', async () => {
    const [first] = (await read({ l: 1 })).members;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ a: 'not-a-cursor' }, /cursor is not one this server issued/],
      [{ b: 'bm90LWEtY3Vyc29y' }, /cursor is not one this server issued/],
      [{ a: first!.cursor, b: first!.cursor }, /at most one of after and before/],
      [{ l: 0 }, /limit must be between 1 and 1000/],
      [{ l: 1001 }, /limit must be between 1 and 1000/],
    ];
    for (const [args, message] of cases) {
      for (const field of [
        'members(after: $a, before: $b, limit: $l) { id }',
        'memberIds(after: $a, before: $b, limit: $l)',
      ]) {
        const res = await t.gql(
          `query($c: ID!, $a: String, $b: String, $l: Int) { conversation(id: $c) { ${field} } }`,
          { c: channel, ...args },
          erin,
        );
        const err = res.body.errors?.[0];
        expect(err?.extensions?.code, `${field} ${JSON.stringify(args)}`).toBe('VALIDATION');
        expect(err?.message).toMatch(message);
      }
    }
  });
});
