import { wordKeys } from './analyze.js';
import { isMarkedTerm } from './languages.js';
import { foldText, isCjkChar, isWordChar } from './tokenize.js';

/** A matched range of the original text, in UTF-16 code units (JavaScript string indices). */
export interface Highlight {
  start: number;
  length: number;
}

interface Span {
  term: string;
  start: number;
  end: number;
}

/**
 * The terms of `text` with where each came from in it: the tokenizer's rules applied to each
 * character's folding, so a term maps back to the original characters it was made from. A
 * character that folds into several ("ß" -> "ss") lends its whole range to the term.
 */
export function termSpans(text: string): Span[] {
  const spans: Span[] = [];
  // One unit per folded character, with the original range it came from.
  const units: Array<{ ch: string; start: number; end: number }> = [];
  let at = 0;
  for (const original of text) {
    const end = at + original.length;
    for (const ch of foldText(original)) units.push({ ch, start: at, end });
    at = end;
  }
  let i = 0;
  while (i < units.length) {
    const kind = kindOf(units[i]!.ch);
    if (kind === 'other') {
      i += 1;
      continue;
    }
    let j = i;
    while (j < units.length && kindOf(units[j]!.ch) === kind) j += 1;
    const run = units.slice(i, j);
    if (kind === 'word') {
      spans.push({
        term: run.map((u) => u.ch).join(''),
        start: run[0]!.start,
        end: run[run.length - 1]!.end,
      });
    } else if (run.length === 1) {
      spans.push({ term: run[0]!.ch, start: run[0]!.start, end: run[0]!.end });
    } else {
      for (let k = 0; k + 1 < run.length; k += 1) {
        spans.push({
          term: run[k]!.ch + run[k + 1]!.ch,
          start: run[k]!.start,
          end: run[k + 1]!.end,
        });
      }
    }
    i = j;
  }
  return spans;
}

/** How the tokenizer classes a folded character. */
function kindOf(ch: string): 'cjk' | 'word' | 'other' {
  if (isCjkChar(ch)) return 'cjk';
  return isWordChar(ch) ? 'word' : 'other';
}

/** What a query's highlights look for (query-grammar.ts). */
export interface HighlightSpec {
  /** Every term a word or bigram may match: exact words, stems (bare and marked), bigrams. */
  terms: ReadonlySet<string>;
  prefixes: readonly string[];
}

/**
 * The ranges of `text` that match a query, merged where they overlap (bigrams of one CJK run),
 * in order. A word matches as the person sees it: "Reporting" for "report", "Москве" for
 * "москва", "Donaudampfschifffahrtsgesellschaft" for "schiff" (the whole word).
 */
export function highlightsOf(text: string, spec: HighlightSpec): Highlight[] {
  const stems = [...spec.terms].some(isMarkedTerm);
  const ranges = termSpans(text)
    .filter((s) => {
      if (spec.terms.has(s.term)) return true;
      if (spec.prefixes.some((p) => s.term.startsWith(p))) return true;
      if (!stems || isCjkChar(s.term[0]!)) return false;
      for (const key of wordKeys(text.slice(s.start, s.end))) if (spec.terms.has(key)) return true;
      return false;
    })
    .sort((a, b) => a.start - b.start);
  const merged: Array<{ start: number; end: number }> = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r.start < last.end) last.end = Math.max(last.end, r.end);
    else merged.push({ start: r.start, end: r.end });
  }
  return merged.map((r) => ({ start: r.start, length: r.end - r.start }));
}

/** A part of a long text around its first highlight, so a result shows enough to decide. */
export interface Excerpt {
  text: string;
  /** Where it begins and ends in the message's text (UTF-16 code units). */
  start: number;
  end: number;
  highlights: Highlight[];
}

/** Longest excerpt, in UTF-16 code units; a shorter text is its own excerpt. */
export const EXCERPT_MAX = 240;
const EXCERPT_BEFORE = 60;

export function excerptOf(text: string, highlights: readonly Highlight[]): Excerpt {
  if (text.length <= EXCERPT_MAX) {
    return { text, start: 0, end: text.length, highlights: [...highlights] };
  }
  const first = highlights[0]?.start ?? 0;
  let start = Math.max(0, first - EXCERPT_BEFORE);
  // Begin at a word: after the nearest space before `start`, if one is near.
  if (start > 0) {
    const space = text.lastIndexOf(' ', start);
    if (space !== -1 && start - space < 20) start = space + 1;
  }
  let end = Math.min(text.length, start + EXCERPT_MAX);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + EXCERPT_MAX / 2) end = space;
  }
  // Never cut a surrogate pair.
  if (start > 0 && /[\udc00-\udfff]/.test(text[start]!)) start -= 1;
  if (end < text.length && /[\udc00-\udfff]/.test(text[end]!)) end += 1;
  return {
    text: text.slice(start, end),
    start,
    end,
    highlights: highlights
      .filter((h) => h.start >= start && h.start + h.length <= end)
      .map((h) => ({ start: h.start - start, length: h.length })),
  };
}
