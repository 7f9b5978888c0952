import { eld } from 'eld/small';
import { describe, expect, it } from 'vitest';

import { LANGUAGE_CODES } from '../../src/services/search/languages.js';
import { ngramDetector, ngramTable } from '../../src/services/search/ngram-scores.js';

import { EUROPEAN } from './evaluation/european.js';
import { EUROPEAN_MORE } from './evaluation/european-more.js';
import { OTHER_SCRIPTS } from './evaluation/other-scripts.js';
import { OTHER_SCRIPTS_MORE } from './evaluation/other-scripts-more.js';
import { MESSAGES } from './labelled-set.js';

// ngram-scores.ts computes ELD's detection with memory of words and n-grams: its answers must
// be ELD's own (language, reliability and every score) on every text, including texts met a
// second time (answered from that memory) and texts past ELD's cuts (1,000 characters, 350 and
// 380 bytes).

eld.setLanguageSubset([...LANGUAGE_CODES]);

const SETS = [EUROPEAN, EUROPEAN_MORE, OTHER_SCRIPTS, OTHER_SCRIPTS_MORE];

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function texts(): string[] {
  const out = [
    ...Object.values(MESSAGES),
    ...SETS.flatMap((set) => set.flatMap((l) => Object.values(l.messages))),
    ...SETS.flatMap((set) => set.flatMap((l) => l.queries.map((q) => q.query))),
    '',
    '   ',
    '!!! ??? ...',
    'ok',
    'abc',
    "don’t won't isn`t",
    '12345678 1234 9',
    'constructor __proto__ toString hasOwnProperty',
    'https://example.com/path?q=1 mail@example.com www.example.org',
    '😀 emoji 😀 текст 😀 نص',
  ];
  // Words of every set mixed at random, long and short, so texts cross ELD's cuts.
  const words = out.join(' ').split(/\s+/).filter(Boolean);
  const r = rng(45);
  for (let i = 0; i < 400; i += 1) {
    const n = 1 + Math.floor(r() ** 2 * 300);
    out.push(Array.from({ length: n }, () => words[Math.floor(r() * words.length)]).join(' '));
  }
  return out;
}

describe("ELD's detection with memory", () => {
  it('answers as eld.detect on every text, the first time and again', () => {
    const mine = ngramDetector(LANGUAGE_CODES);
    const all = texts();
    let reliable = 0;
    for (const round of [1, 2]) {
      for (const text of all) {
        const want = eld.detect(text);
        const got = mine.detect(text);
        const context = `round ${round}: ${text.slice(0, 60)}`;
        expect(got.language, context).toBe(want.language);
        expect(got.isReliable(), context).toBe(want.isReliable());
        expect(got.getScores(), context).toEqual(want.getScores());
        if (want.isReliable()) reliable += 1;
      }
    }
    // The texts reach both answers of reliability and every cut.
    expect(reliable).toBeGreaterThan(100);
    expect(reliable).toBeLessThan(all.length * 2);
    expect(all.some((t) => t.length > 1000)).toBe(true);
  });

  it('finds no language in a text without letters', () => {
    const mine = ngramDetector(LANGUAGE_CODES);
    for (const text of ['', '   ', '123 456', '!!!']) {
      expect(mine.detect(text).language).toBe(eld.detect(text).language);
    }
    expect(mine.detect('').isReliable()).toBe(false);
  });
});

describe("ELD's database, read from its file", () => {
  it('holds every score of the kept languages, and only those n-grams having one', async () => {
    // The module's own object, which the server never imports.
    const { ngramsData } = (await import(
      new URL('../ngrams/small.js', import.meta.resolve('eld/small')).href
    )) as {
      ngramsData: {
        languages: Record<string, string>;
        ngrams: Record<string, Record<string, number>>;
      };
    };
    const all = Object.values(ngramsData.languages);
    for (const codes of [all, LANGUAGE_CODES, ['fr', 'en']]) {
      const table = ngramTable(codes);
      const kept = Object.keys(ngramsData.languages)
        .map(Number)
        .filter((i) => codes.includes(ngramsData.languages[i]!));
      expect(table.kept).toEqual(kept);
      let ngrams = 0;
      const wrong: string[] = [];
      for (const [ngram, stored] of Object.entries(ngramsData.ngrams)) {
        const want: string[] = [];
        for (const [lang, score] of Object.entries(stored)) {
          const code = ngramsData.languages[lang]!;
          if (codes.includes(code)) want.push(`${code} ${score + 53}`);
        }
        const index = table.indexOf.get(ngram);
        const got: string[] = [];
        if (index !== undefined) {
          for (let i = table.offsets[index]!; i < table.offsets[index + 1]!; i += 1) {
            got.push(`${table.names[table.kept[table.slots[i]!]!]} ${table.scores[i]}`);
          }
        }
        if (want.length) ngrams += 1;
        if ((index === undefined) !== !want.length || got.join() !== want.join()) wrong.push(ngram);
      }
      expect(wrong).toEqual([]);
      expect(table.indexOf.size).toBe(ngrams);
    }
    expect(Object.keys(ngramsData.ngrams).length).toBe(81_206);
    expect(ngramTable(all).scores.length).toBe(141_339);
    // The same list in another order is the same table.
    expect(ngramTable([...LANGUAGE_CODES].reverse())).toBe(ngramTable(LANGUAGE_CODES));
  });
});
