import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { exec, generalOf } from '../commands/_helpers.js';
import { createWorkspace, expectCode, ok } from '../workspaces/_helpers.js';

// Lists answered as page objects that paged one way only now page both ways (contract,
// Pagination), with items added between the pages: `commandAudit` (newest first; `before` for
// older entries, `after` for newer, as `instanceAuditLog`) and `searchMessages` (NEWEST:
// `nextCursor` on the way asked, `prevCursor` back; RELEVANCE keeps the ranked set).

interface Page {
  ids: string[];
  nextCursor: string | null;
  prevCursor: string | null;
}

describe('page objects paged both ways while items are added', () => {
  let t: TestApp;
  let owner: Agent;
  let serverId = '';
  let general = '';
  let serial = 0;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUpAndIn(t);
    serverId = (await createWorkspace(t, owner, 'pages')).id;
    general = await generalOf(t, owner, serverId);
  });
  afterAll(async () => t?.close());

  const send = async (text: string) =>
    ok(
      await t.gql(
        'mutation($i: SendMessageInput!) { sendMessage(input: $i) { id } }',
        { i: { conversationId: general, text } },
        owner,
      ),
    ).sendMessage.id as string;

  const run = async () => {
    const res = ok(
      await exec(t, owner, {
        command: 'me',
        args: { text: `waves ${++serial}` },
        context: { serverId, conversationId: general },
      }),
    ).executeCommand;
    expect(res.status).toBe('DONE');
  };

  const audit = async (args: Record<string, unknown>): Promise<Page> => {
    const page = ok(
      await t.gql(
        `query($s: ID!, $a: String, $b: String, $l: Int) {
          commandAudit(serverId: $s, after: $a, before: $b, limit: $l) {
            entries { id } nextCursor prevCursor } }`,
        { s: serverId, ...args },
        owner,
      ),
    ).commandAudit;
    return { ...page, ids: page.entries.map((e: { id: string }) => e.id) };
  };

  it('pages the command audit to older entries and back to newer ones', async () => {
    for (let i = 0; i < 5; i++) await run();
    const all = (await audit({ l: 100 })).ids;
    // Older, two at a time, a run between pages: exactly the entries that were there.
    const seen: string[] = [];
    let page = await audit({ l: 2 });
    let last = page;
    for (;;) {
      seen.push(...page.ids);
      last = page;
      await run();
      if (!page.nextCursor) break;
      page = await audit({ b: page.nextCursor, l: 2 });
    }
    expect(seen).toEqual(all);
    // Newer again from the oldest page: every entry above it once, the runs made meanwhile too.
    const now = (await audit({ l: 100 })).ids;
    expect(now.length).toBe(all.length + Math.ceil(all.length / 2));
    const back: string[] = [];
    let cursor = last.prevCursor;
    while (cursor) {
      const newer = await audit({ a: cursor, l: 2 });
      back.unshift(...newer.ids);
      // Going back from here leads to older entries again.
      expect(newer.nextCursor).not.toBeNull();
      cursor = newer.prevCursor;
    }
    expect(back).toEqual(now.slice(0, now.length - last.ids.length));
    expectCode(
      await t.gql(
        'query($s: ID!, $a: String, $b: String) { commandAudit(serverId: $s, after: $a, before: $b) { nextCursor } }',
        { s: serverId, a: last.prevCursor, b: last.prevCursor },
        owner,
      ),
      'VALIDATION',
    );
  });

  const search = async (order: string, args: Record<string, unknown>): Promise<Page> => {
    const page = ok(
      await t.gql(
        `query($q: String!, $o: SearchOrder, $a: String, $b: String, $l: Int) {
          searchMessages(query: $q, order: $o, after: $a, before: $b, limit: $l) {
            items { message { id } } nextCursor prevCursor } }`,
        { q: 'marmot', o: order, ...args },
        owner,
      ),
    ).searchMessages;
    return { ...page, ids: page.items.map((h: { message: { id: string } }) => h.message.id) };
  };

  for (const order of ['NEWEST', 'RELEVANCE']) {
    it(`pages searchMessages (${order}) on and back while messages are sent`, async () => {
      for (let i = 0; i < 5; i++) await send(`marmot ${'marmot '.repeat(i % 3)}sighting ${i}`);
      const all = (await search(order, { l: 100 })).ids;
      const seen: string[] = [];
      const pages: Page[] = [];
      let page = await search(order, { l: 2 });
      for (;;) {
        seen.push(...page.ids);
        pages.push(page);
        await send(`marmot seen meanwhile ${++serial}`);
        if (!page.nextCursor) break;
        page = await search(order, { a: page.nextCursor, l: 2 });
      }
      // Neither the sends meanwhile nor a repeat: the list as it was.
      expect(seen).toEqual(all);
      // Back from the last page to the first, then on again from the first back page.
      const back: string[] = [];
      let cursor = pages.at(-1)!.prevCursor;
      let first: Page | null = null;
      while (cursor) {
        const p = await search(order, { b: cursor, l: 2 });
        back.unshift(...p.ids);
        first = p;
        cursor = p.nextCursor;
      }
      const shown = all.slice(0, all.length - pages.at(-1)!.ids.length);
      if (order === 'RELEVANCE') {
        // The ranked set stays the one the first page ranked.
        expect(back).toEqual(shown);
      } else {
        // Newest first: the messages sent meanwhile sit above the first page's.
        const now = (await search(order, { l: 100 })).ids;
        expect(back).toEqual(now.slice(0, now.length - pages.at(-1)!.ids.length));
        expect(back.slice(-shown.length)).toEqual(shown);
      }
      const again = await search(order, { a: first!.prevCursor, l: 2 });
      expect(again.ids).toEqual(back.slice(first!.ids.length, first!.ids.length + 2));
    });
  }
});
