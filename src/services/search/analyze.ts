import { linkifyit } from 'linkify-it';

import { RecentCache } from '../../lib/recent-cache.js';

import { compoundParts } from './compounds.js';
import { detectLanguage, needsFallback } from './detect.js';
import {
  HAS_LINK_TERM,
  languageOf,
  languagesOfScript,
  scriptOf,
  type Language,
} from './languages.js';
import { foldText, isCjkChar, tokenize } from './tokenize.js';

// What a message is indexed under, and what a query word may match (docs/search.md,
// "Languages"). A message's terms are:
// - its exact words and CJK bigrams (tokenize.ts), so exact matches stay possible and rank first;
// - the stems of its words in its language (detect.ts), each behind the language's mark
//   ("¡report" for English "reporting"), where the stem differs from the word;
// - the parts of its German, Dutch and Swedish compounds, stemmed and marked (compounds.ts);
// - the words Intl.Segmenter finds in Japanese and Chinese that are one character long
//   ("猫" in "猫が好き"), which bigrams cannot hold;
// - `¶link` when it holds a link (`has:link`).
// A query word matches any of: the word, and for each language of its script the word's stem
// (marked, or as an exact word: "reports" finds "report").

/** Bumped whenever the terms a text gets change; `svc search reindex` rebuilds older rows. */
export const ANALYSIS_VERSION = 3;

// A link as link previews see one (services/link-previews/links.ts): http(s) and www. links.
const linkify = linkifyit({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}]/u;

const segmenters = {
  ja: new Intl.Segmenter('ja', { granularity: 'word' }),
  zh: new Intl.Segmenter('zh', { granularity: 'word' }),
};

/** Lower-cased NFKC text with its diacritics, as stemmers expect. */
function lowered(text: string): string {
  // Turkish "İ" lower-cases to "i" + a combining dot; the stemmers want a plain "i".
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/i\u0307/g, 'i');
}

/** The words of a text outside CJK, lower-cased with their diacritics, in order. */
export function rawWords(text: string): string[] {
  const out: string[] = [];
  let word = '';
  for (const ch of lowered(text)) {
    if (!isCjkChar(ch) && WORD_CHAR.test(ch)) word += ch;
    else if (word) {
      out.push(word);
      word = '';
    }
  }
  if (word) out.push(word);
  return out;
}

/** A word's stem in `lang`, folded as index terms are. */
export function stemOf(lang: Language, raw: string): string {
  return foldText(lang.stem(raw));
}

/** A word's stem, through its first variant if it has one ("huset" -> "hus"). */
function baseOf(lang: Language, word: string): string {
  return stemOf(lang, lang.variants?.(word)[0] ?? word);
}

/**
 * The marked terms of words lately indexed, by language and word: chat repeats its words, and a
 * word's stems, variants and compound parts cost up to a hundred times its lookup here.
 */
const WORDS_KEPT = 20_000;
const recentWords = new RecentCache<string, readonly string[]>(WORDS_KEPT);
/**
 * Longer words and CJK chunks are analyzed each time, not kept: no real word is this long, and
 * a text of long unique chunks would otherwise fill the memo (and the server's, which the
 * analysis thread's answers fill) with kilobytes an entry. A text that has one goes to the
 * analysis thread.
 */
const LONGEST_KEPT = 48;

/** `recentWords.through`, for a key short enough to keep. */
function kept(key: string, make: () => readonly string[]): readonly string[] {
  return key.length > LONGEST_KEPT + 2 ? make() : recentWords.through(key, make);
}

/** The recent words' entries of a text's words (another thread analyzed it: `learnWords`). */
export type LearnedWords = Array<[key: string, terms: readonly string[]]>;

/** What the recent words hold for `text`'s words and chunks (to send to another thread). */
export function wordsOf(text: string, fallback: string | null): LearnedWords {
  const out: LearnedWords = [];
  for (const [key] of memoKeys(text, fallback)) {
    const terms = recentWords.get(key);
    if (terms !== undefined) out.push([key, terms]);
  }
  return out;
}

/** Keeps words another thread analyzed (`wordsOf` there) among the recent words here. */
export function learnWords(words: LearnedWords): void {
  for (const [key, terms] of words) recentWords.set(key, terms);
}

function markedTerms(lang: Language, raw: string): string[] {
  const out = new Set<string>();
  const folded = foldText(raw);
  const stem = stemOf(lang, raw);
  if (stem && stem !== folded) out.add(lang.mark + stem);
  variantsAndParts(lang, raw, folded, out);
  return [...out];
}

/** The marked stems of a word's variants and, in a compounding language, of its parts. */
function variantsAndParts(lang: Language, raw: string, folded: string, into: Set<string>) {
  for (const variant of lang.variants?.(raw) ?? []) into.add(lang.mark + stemOf(lang, variant));
  if (!lang.compounds) return;
  for (const part of compoundParts(
    lang.code,
    folded,
    (w) => baseOf(lang, w),
    (w) => lang.variants?.(w) ?? [],
  )) {
    into.add(lang.mark + stemOf(lang, part));
    for (const v of lang.variants?.(part) ?? []) into.add(lang.mark + stemOf(lang, v));
  }
}

const HAN_OR_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

// A chunk's key among the recent words: a mark no language's stems use, then the chunk.
const CHUNK_JA = '\u0001j';
const CHUNK_ZH = '\u0001z';

type Memo = [key: string, make: () => readonly string[]];

/**
 * A text's entries among the recent words, each with how to make its terms:
 * - each whitespace-separated chunk of Japanese or Chinese: its one-character words, by
 *   Intl.Segmenter (no word spans whitespace, so a chunk at a time finds what the whole text
 *   would); chat repeats its phrases;
 * - each word of three letters or more: its stem (if not the word) and parts in the text's
 *   language.
 */
function memoKeys(text: string, fallback: string | null | undefined): Memo[] {
  const out: Memo[] = [];
  const folded = foldText(text);
  if (HAN_OR_KANA.test(folded)) {
    const mark = KANA.test(folded) ? CHUNK_JA : CHUNK_ZH;
    for (const chunk of folded.split(/\s+/)) {
      if (HAN_OR_KANA.test(chunk)) out.push([mark + chunk, () => chunkWords(mark, chunk)]);
    }
  }
  const lang = languageOf(detectLanguage(text, fallback));
  if (!lang) return out;
  for (const raw of rawWords(text)) {
    if (raw.length < 3) continue;
    out.push([
      lang.mark + raw,
      () => (scriptOf(raw) === lang.script ? markedTerms(lang, raw) : []),
    ]);
  }
  return out;
}

function chunkWords(mark: string, chunk: string): string[] {
  const out: string[] = [];
  const segmenter = mark === CHUNK_JA ? segmenters.ja : segmenters.zh;
  for (const s of segmenter.segment(chunk)) {
    if (!s.isWordLike) continue;
    const chars = [...s.segment];
    if (chars.length === 1 && isCjkChar(chars[0]!) && !/\p{Script=Hangul}/u.test(chars[0]!)) {
      out.push(chars[0]!);
    }
  }
  return out;
}

/**
 * The distinct index terms of a message's text. `fallback` is the language to stem in when
 * the text is too short to tell (the author's, else the workspace's).
 */
export function analyzeText(text: string, fallback?: string | null): string[] {
  return termsOf(text, fallback, true)!;
}

/** The terms of a text; with `made` false, only from the recent words (null when one is not). */
function termsOf(text: string, fallback: string | null | undefined, made: boolean) {
  const terms = new Set(tokenize(text));
  if (terms.size === 0) return [];
  for (const [key, make] of memoKeys(text, fallback)) {
    const found = made ? kept(key, make) : recentWords.get(key);
    if (found === undefined) return null;
    for (const term of found) terms.add(term);
  }
  if (linkify.test(text)) terms.add(HAS_LINK_TERM);
  return [...terms];
}

/** `analyzeFor`'s answer when the text is too short to tell its language. */
export const NEEDS_FALLBACK = 0;

/**
 * A message's terms, as `analyzeText`; with `fallback` undefined, a text the detector cannot
 * tell answers NEEDS_FALLBACK instead, for the caller to ask again with the author's or the
 * workspace's language (read only then).
 */
export function analyzeFor(
  text: string,
  fallback?: string | null,
): string[] | typeof NEEDS_FALLBACK {
  if (fallback === undefined && needsFallback(text)) return NEEDS_FALLBACK;
  return analyzeText(text, fallback ?? null);
}

/**
 * `analyzeFor` from the words analyzed lately: null when a word of the text was not analyzed
 * lately (its stems and compound parts may cost a hundred times a lookup; the caller hands the
 * text to the analysis thread, analyzer.ts).
 */
export function analyzeForFromRecent(
  text: string,
  fallback?: string | null,
): string[] | typeof NEEDS_FALLBACK | null {
  if (fallback === undefined && needsFallback(text)) return NEEDS_FALLBACK;
  return termsOf(text, fallback ?? null, false);
}

/**
 * What one query word (not CJK) may match: the word itself, and for every language of its
 * script its stem, both marked (a stem or compound part in a message of that language) and
 * bare (the stem written as a word). The exact word comes first.
 */
export function wordAlternatives(raw: string): string[] {
  const folded = foldText(raw);
  const out = new Set([folded]);
  const script = scriptOf(raw);
  if (script === null || raw.length < 3) return [...out];
  for (const lang of languagesOfScript(script)) {
    const stem = stemOf(lang, raw);
    if (!stem) continue;
    out.add(lang.mark + stem);
    out.add(stem);
    // A message word whose stem is the query word itself ("toplantıda" for "toplantı").
    out.add(lang.mark + folded);
    for (const variant of lang.variants?.(raw) ?? []) out.add(lang.mark + stemOf(lang, variant));
  }
  return [...out];
}

/**
 * Every term a word of a message is found by, in every language of its script: the word, its
 * stems (bare and marked) and its compound parts. Highlights and relevance compare these with a
 * query's alternatives.
 */
export function wordKeys(raw: string): ReadonlySet<string> {
  return recentKeys.through(raw, keysOfWord);
}

/** The keys of words lately highlighted: a page of results repeats its words, as chat does. */
const recentKeys = new RecentCache<string, ReadonlySet<string>>(WORDS_KEPT);

function keysOfWord(raw: string): Set<string> {
  const folded = foldText(raw);
  const keys = new Set([folded]);
  const script = scriptOf(raw);
  if (script === null || raw.length < 3) return keys;
  for (const lang of languagesOfScript(script)) {
    const stem = stemOf(lang, raw);
    if (stem) {
      keys.add(stem);
      keys.add(lang.mark + stem);
    }
    keys.add(lang.mark + folded);
    variantsAndParts(lang, raw, folded, keys);
  }
  return keys;
}
