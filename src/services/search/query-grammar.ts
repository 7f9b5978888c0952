import { validation } from '../../errors.js';

import { rawWords, wordAlternatives } from './analyze.js';
import { HAS_LINK_TERM } from './languages.js';
import { foldText, isCjkChar, tokenize } from './tokenize.js';

// What people type in the search box (docs/search.md, "Query grammar"), one grammar for all:
//
//   query    := item (space item)*
//   item     := '-' word            excluded: no result holds the word (nor its stems)
//             | '"' text '"'        phrase: these exact words side by side, no stemming
//             | word '*'            prefix: a word beginning so
//             | operator ':' value
//             | text                words: each, or one of its stems, must be there
//   operator := from (@name) | in (#channel or @person) | before | after | on (YYYY-MM-DD,
//               on: also YYYY-MM) | has (file, link) | is (thread)
//
// Operators are recognized by name only: "10:30" or "https://x" are text. A malformed item
// answers VALIDATION saying what is wrong and what would be right.

export const OPERATORS = ['from', 'in', 'before', 'after', 'on', 'has', 'is'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface ParsedQuery {
  /** Each group: one of its terms must be in the index (a word and its stems, or a bigram). */
  groups: string[][];
  prefixes: string[];
  excluded: string[];
  /** Phrases as term sequences, to find side by side in the text (checked in the server). */
  phrases: string[][];
  /** Query words as typed (folded), for ranking and highlights. */
  words: string[];
  from: string[];
  in: string[];
  /** Inclusive lower and exclusive upper bound of the send time, from before/after/on. */
  since: number | null;
  until: number | null;
  hasFile: boolean;
  isThread: boolean;
}

const DAY_MS = 86_400_000;

/** A UTC day (or month, when `month` is allowed) as [start, end) in ms, or null. */
function parseDate(value: string, month: boolean): [number, number] | null {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day) {
    const at = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    const d = new Date(at);
    if (d.getUTCMonth() !== Number(day[2]) - 1 || d.getUTCDate() !== Number(day[3])) return null;
    return [at, at + DAY_MS];
  }
  const m = month ? /^(\d{4})-(\d{2})$/.exec(value) : null;
  if (m && Number(m[2]) >= 1 && Number(m[2]) <= 12) {
    return [Date.UTC(Number(m[1]), Number(m[2]) - 1, 1), Date.UTC(Number(m[1]), Number(m[2]), 1)];
  }
  return null;
}

/** Splits a query into items: runs without spaces, and quoted phrases (with a leading '-'). */
function lex(query: string): string[] {
  const items: string[] = [];
  let i = 0;
  while (i < query.length) {
    if (/\s/u.test(query[i]!)) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < query.length && !/\s/u.test(query[j]!)) {
      if (query[j] === '"') {
        const close = query.indexOf('"', j + 1);
        if (close === -1) {
          throw validation(
            `the quote at character ${j + 1} is not closed: put a " after the phrase, or remove it`,
          );
        }
        j = close + 1;
      } else j += 1;
    }
    items.push(query.slice(i, j));
    i = j;
  }
  return items;
}

/**
 * The runs of CJK characters of a text as bigram sequences, for runs of three characters or
 * more: their bigrams must stand side by side ("東京都" is not "東京と京都").
 */
function cjkRuns(text: string): string[][] {
  const runs: string[][] = [];
  let run = '';
  const flush = () => {
    if ([...run].length >= 3) runs.push(tokenize(run));
    run = '';
  };
  for (const ch of foldText(text)) {
    if (isCjkChar(ch)) run += ch;
    else flush();
  }
  flush();
  return runs;
}

/** The index groups of a run of text: each word with its stems, each CJK bigram alone. */
function textGroups(text: string): { groups: string[][]; words: string[] } {
  const terms = tokenize(text);
  const raws = rawWords(text);
  const latinTerms = terms.filter((t) => !isCjkChar(t[0]!));
  const aligned = latinTerms.length === raws.length;
  let r = 0;
  const groups = terms.map((t) => {
    if (isCjkChar(t[0]!)) return [t];
    const raw = raws[r++];
    return aligned && raw !== undefined ? wordAlternatives(raw) : [t];
  });
  return { groups, words: terms };
}

export function parseQuery(query: string): ParsedQuery {
  const out: ParsedQuery = {
    groups: [],
    prefixes: [],
    excluded: [],
    phrases: [],
    words: [],
    from: [],
    in: [],
    since: null,
    until: null,
    hasFile: false,
    isThread: false,
  };
  const narrow = (from: number | null, to: number | null) => {
    if (from !== null) out.since = out.since === null ? from : Math.max(out.since, from);
    if (to !== null) out.until = out.until === null ? to : Math.min(out.until, to);
  };
  for (const item of lex(query)) {
    const op = /^([a-z]+):(.*)$/is.exec(item);
    const name = op?.[1]?.toLowerCase();
    if (op && name && (OPERATORS as readonly string[]).includes(name)) {
      operator(name as Operator, op[2]!, out, narrow);
      continue;
    }
    if (item.startsWith('-') && item.length > 1) {
      const rest = item.slice(1);
      if (rest.startsWith('"')) {
        throw validation(`exclude words one at a time (-word), not a phrase: ${item}`);
      }
      out.excluded.push(...textGroups(rest).groups.flat());
      continue;
    }
    if (item.includes('"')) {
      // Text around a phrase ("a"b) is read as words; each quoted part is a phrase.
      for (const [n, part] of item.split('"').entries()) {
        if (n % 2 === 0) {
          const { groups, words } = textGroups(part);
          out.groups.push(...groups);
          out.words.push(...words);
        } else {
          const terms = tokenize(part);
          if (terms.length === 0) continue;
          out.groups.push(...terms.map((t) => [t]));
          out.phrases.push(terms);
          out.words.push(...terms);
        }
      }
      continue;
    }
    if (item.endsWith('*')) {
      const stem = item.replace(/\*+$/, '');
      const terms = tokenize(stem);
      const last = terms[terms.length - 1];
      if (!last || [...last].length < 2) {
        throw validation(`a prefix needs at least two letters before the *: ${item}`);
      }
      const { groups, words } = textGroups(stem);
      out.groups.push(...groups.slice(0, -1));
      out.prefixes.push(last);
      out.words.push(...words);
      continue;
    }
    const { groups, words } = textGroups(item);
    out.groups.push(...groups);
    out.words.push(...words);
    out.phrases.push(...cjkRuns(item));
  }
  if (out.since !== null && out.until !== null && out.since >= out.until) {
    throw validation('the dates leave no day: after: and on: must come before before:');
  }
  return out;
}

function operator(
  name: Operator,
  value: string,
  out: ParsedQuery,
  narrow: (from: number | null, to: number | null) => void,
) {
  const lower = value.toLowerCase();
  switch (name) {
    case 'from': {
      const user = value.replace(/^@/, '');
      if (!user) throw validation('from: needs a person, like from:@ann');
      out.from.push(user);
      return;
    }
    case 'in': {
      if (!/^[#@]?.+/.test(value) || value === '#' || value === '@') {
        throw validation('in: needs a channel or a person, like in:#general or in:@ann');
      }
      out.in.push(value.startsWith('#') || value.startsWith('@') ? value : `#${value}`);
      return;
    }
    case 'before':
    case 'after':
    case 'on': {
      const range = parseDate(value, name === 'on');
      if (!range) {
        throw validation(
          `${name}: needs a date like ${name}:2026-03-01${name === 'on' ? ' (or a month, like on:2026-03)' : ''}`,
        );
      }
      if (name === 'before') narrow(null, range[0]);
      else if (name === 'after') narrow(range[1], null);
      else narrow(range[0], range[1]);
      return;
    }
    case 'has': {
      if (lower === 'file') out.hasFile = true;
      else if (lower === 'link') out.groups.push([HAS_LINK_TERM]);
      else throw validation(`has: takes file or link, not "${value}"`);
      return;
    }
    case 'is': {
      if (lower === 'thread') out.isThread = true;
      else throw validation(`is: takes thread, not "${value}"`);
      return;
    }
  }
}

/** Whether the text's terms hold `phrase` side by side, in order. */
export function holdsPhrase(textTerms: readonly string[], phrase: readonly string[]): boolean {
  outer: for (let i = 0; i + phrase.length <= textTerms.length; i += 1) {
    for (let j = 0; j < phrase.length; j += 1) if (textTerms[i + j] !== phrase[j]) continue outer;
    return true;
  }
  return false;
}
