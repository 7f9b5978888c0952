import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ManualClock } from '../../src/lib/clock.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, expectCode, ok, send } from '../conversations/_helpers.js';

// searchMessages(order: RELEVANCE) (docs/search.md, "Order"): BM25 over each message's terms
// with a bonus for the query's words side by side, ties newest first, a ranked set fixed by the
// first page; the same order on SQLite and PostgreSQL.
const SEARCH = `query($q: String!, $o: SearchOrder, $after: String, $limit: Int) {
  searchMessages(query: $q, order: $o, after: $after, limit: $limit) {
    items { message { id text } } hasMore nextCursor } }`;
const CHANNELS = 'query($s: ID!) { channels(serverId: $s) { id name } }';

describe('search by relevance', () => {
  const clock = new ManualClock(Date.parse('2030-05-01T00:00:00Z'));
  let t: TestApp;
  let ann: Agent;
  let general: string;

  async function page(q: string, order: string, after?: string | null, limit = 10) {
    return ok(await t.gql(SEARCH, { q, o: order, after, limit }, ann)).searchMessages as {
      items: Array<{ message: { id: string; text: string } }>;
      hasMore: boolean;
      nextCursor: string | null;
    };
  }
  const texts = async (q: string, order = 'RELEVANCE', limit = 10) =>
    (await page(q, order, null, limit)).items.map((i) => i.message.text);

  async function post(text: string) {
    clock.advance(1000);
    return send(t, ann, general, text);
  }

  beforeAll(async () => {
    t = await createTestApp({ clock });
    ann = await signUpAndIn(t, { username: 'annrank' });
    const serverId = (await createWorkspace(t, ann, 'Ranking')).id;
    general = ok(await t.gql(CHANNELS, { s: serverId }, ann)).channels.find(
      (c: { name: string }) => c.name === 'general',
    ).id;
    // Oldest first; relevance must not follow the time order.
    await post(
      'the deploy went fine yesterday after a long and careful review of every single change we made last week',
    );
    await post('deploy deploy deploy');
    await post('failed to deploy it');
    await post('the deploy failed again during the night while nobody was watching');
    await post('lunch at noon, anyone?');
    await post('we should deploy on Friday and keep an eye on the dashboards all weekend long');
  });
  afterAll(async () => t?.close());

  it('puts the message most about the word first, a long passing mention last', async () => {
    const ranked = await texts('deploy');
    expect(ranked[0]).toBe('deploy deploy deploy');
    expect(ranked).toHaveLength(5);
    expect(ranked.at(-1)).toBe(
      'the deploy went fine yesterday after a long and careful review of every single change we made last week',
    );
    // Newest first is still the default.
    expect((await texts('deploy', 'NEWEST'))[0]).toBe(
      'we should deploy on Friday and keep an eye on the dashboards all weekend long',
    );
  });

  it('prefers the words side by side in the query order over a shorter message', async () => {
    expect(await texts('deploy failed')).toEqual([
      'the deploy failed again during the night while nobody was watching',
      'failed to deploy it',
    ]);
    // Without the run of words, the shorter message is more about them.
    expect(await texts('failed deploy')).toEqual([
      'failed to deploy it',
      'the deploy failed again during the night while nobody was watching',
    ]);
  });

  it('pages through the ranked set without repeats, and a message sent meanwhile stays out', async () => {
    const first = await page('deploy', 'RELEVANCE', null, 2);
    expect(first.hasMore).toBe(true);
    await post('deploy deploy deploy deploy now');
    const second = await page('deploy', 'RELEVANCE', first.nextCursor, 2);
    const third = await page('deploy', 'RELEVANCE', second.nextCursor, 2);
    expect(third.hasMore).toBe(false);
    expect(third.nextCursor).toBeNull();
    const all = [...first.items, ...second.items, ...third.items].map((i) => i.message.text);
    expect(all).toHaveLength(5);
    expect(new Set(all).size).toBe(5);
    expect(all).not.toContain('deploy deploy deploy deploy now');
    // A new first page ranks it.
    expect((await texts('deploy'))[0]).toBe('deploy deploy deploy deploy now');
  });

  it('refuses a cursor of the other order', async () => {
    const newest = await page('deploy', 'NEWEST', null, 1);
    expectCode(
      await t.gql(SEARCH, { q: 'deploy', o: 'RELEVANCE', after: newest.nextCursor }, ann),
      'VALIDATION',
    );
    const ranked = await page('deploy', 'RELEVANCE', null, 1);
    expectCode(
      await t.gql(SEARCH, { q: 'deploy', o: 'NEWEST', after: ranked.nextCursor }, ann),
      'VALIDATION',
    );
  });
});
