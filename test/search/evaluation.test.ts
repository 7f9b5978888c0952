import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isLanguageCode } from '../../src/services/search/languages.js';
import { createTestApp, type Agent, type TestApp } from '../_util/app.js';
import { signUpAndIn } from '../_util/seed.js';
import { createWorkspace, inviteAndJoin, ok, send } from '../conversations/_helpers.js';

import { EUROPEAN } from './evaluation/european.js';
import { EUROPEAN_MORE } from './evaluation/european-more.js';
import { OTHER_SCRIPTS } from './evaluation/other-scripts.js';
import { OTHER_SCRIPTS_MORE } from './evaluation/other-scripts-more.js';
import type { EvalKind, EvalLanguage } from './evaluation/types.js';

// The labelled evaluation set (docs/search.md, "Evaluation"): each language's messages in a
// channel of their own, written by a person who set that language as theirs (the fallback for
// texts too short to tell), and each query searched in that channel (`in:#eval-xx`), as in a
// workspace that speaks the language. Precision and recall are counted per language and kind
// over all its queries (every result of every query against every expected message). The
// languages are set up and searched four at a time (each in order within itself), so the file
// takes a few seconds.

/** `fn` over `items`, LANES at a time, the answers in the items' order. */
const LANES = 4;
async function inLanes<T, R>(items: T[], fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!, i);
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  return out;
}

/** The parts of the set, each language's messages and queries together. */
function byLanguage(parts: EvalLanguage[]): EvalLanguage[] {
  const out = new Map<string, EvalLanguage>();
  for (const part of parts) {
    const into = out.get(part.lang) ?? { lang: part.lang, messages: {}, queries: [] };
    Object.assign(into.messages, part.messages);
    into.queries.push(...part.queries);
    out.set(part.lang, into);
  }
  return [...out.values()];
}

const SET = byLanguage([...EUROPEAN, ...EUROPEAN_MORE, ...OTHER_SCRIPTS, ...OTHER_SCRIPTS_MORE]);

/** The least precision and recall each kind must reach in every language. */
const REQUIRED: Record<EvalKind, number> = { exact: 1, cjk: 1, inflected: 0.95, compound: 0.95 };

const SEARCH = `query($q: String!, $after: String) {
  searchMessages(query: $q, limit: 100, after: $after) { items { message { id } } nextCursor } }`;
const CREATE_CHANNEL = 'mutation($i: CreateChannelInput!) { createChannel(input: $i) { id } }';
const JOIN = 'mutation($c: ID!) { joinChannel(conversationId: $c) { id } }';
const LANGUAGE = 'mutation($l: String) { setSearchLanguage(language: $l) }';

interface Tally {
  found: number;
  right: number;
  expected: number;
}

describe('the labelled evaluation set', () => {
  let t: TestApp;
  let owner: Agent;
  const keyOf = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp();
    owner = await signUpAndIn(t, { username: 'evalowner' });
    const serverId = (await createWorkspace(t, owner, 'Evaluation')).id;
    const authors = await inLanes(SET, (language) =>
      signUpAndIn(t, { username: `eval${language.lang}` }),
    );
    await inviteAndJoin(t, owner, serverId, authors);
    await inLanes(SET, async (language, i) => {
      const author = authors[i]!;
      // Japanese, Chinese and Korean are not stemmed: no language to set.
      if (isLanguageCode(language.lang)) ok(await t.gql(LANGUAGE, { l: language.lang }, author));
      const channel = ok(
        await t.gql(CREATE_CHANNEL, { i: { serverId, name: `eval-${language.lang}` } }, owner),
      ).createChannel.id as string;
      ok(await t.gql(JOIN, { c: channel }, author));
      for (const [key, text] of Object.entries(language.messages)) {
        keyOf.set((await send(t, author, channel, text)).id as string, key);
      }
    });
  }, 120_000);
  afterAll(async () => t?.close());

  it('finds what each query should, per language (precision and recall)', async () => {
    const tallies = new Map<string, Tally>();
    const misses: string[] = [];
    const searchAll = async (query: string) => {
      const got = new Set<string>();
      let after: string | null = null;
      do {
        const page: { items: Array<{ message: { id: string } }>; nextCursor: string | null } = ok(
          await t.gql(SEARCH, { q: query, after }, owner),
        ).searchMessages;
        for (const item of page.items) got.add(keyOf.get(item.message.id) ?? item.message.id);
        after = page.nextCursor;
      } while (after);
      return got;
    };
    const answers = await inLanes(SET, async (language) => {
      const found: Array<Set<string>> = [];
      for (const q of language.queries) {
        found.push(await searchAll(`${q.query} in:#eval-${language.lang}`));
      }
      return found;
    });
    SET.forEach((language, i) => {
      language.queries.forEach((q, j) => {
        const got = answers[i]![j]!;
        const want = new Set(q.expect.filter((k) => k.startsWith(language.lang)));
        const right = [...got].filter((k) => want.has(k)).length;
        const key = `${language.lang} ${q.kind}`;
        const tally = tallies.get(key) ?? { found: 0, right: 0, expected: 0 };
        tally.found += got.size;
        tally.right += right;
        tally.expected += want.size;
        tallies.set(key, tally);
        if (right !== got.size || right !== want.size) {
          misses.push(`${key} ${q.query}: found ${[...got].sort().join(',') || 'nothing'}`);
        }
      });
    });
    const rows = [...tallies].map(([key, { found, right, expected }]) => ({
      key,
      precision: found === 0 ? 1 : right / found,
      recall: expected === 0 ? 1 : right / expected,
    }));
    process.stdout.write(
      `search evaluation (language kind: precision recall)\n${rows
        .map((r) => `  ${r.key}: ${r.precision.toFixed(2)} ${r.recall.toFixed(2)}`)
        .join('\n')}\n${misses.length ? `not as labelled:\n  ${misses.join('\n  ')}\n` : ''}`,
    );
    const below = rows.filter((r) => {
      const need = REQUIRED[r.key.split(' ')[1] as EvalKind];
      return r.precision < need || r.recall < need;
    });
    expect(below).toEqual([]);
  });
});
