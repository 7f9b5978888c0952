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

/**
 * The ranges of `text` that match a query's terms, merged where they overlap (bigrams of one
 * CJK run), in order.
 */
export function highlightsOf(text: string, queryTerms: readonly string[]): Highlight[] {
  const wanted = new Set(queryTerms);
  const ranges = termSpans(text)
    .filter((s) => wanted.has(s.term))
    .sort((a, b) => a.start - b.start);
  const merged: Array<{ start: number; end: number }> = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r.start < last.end) last.end = Math.max(last.end, r.end);
    else merged.push({ start: r.start, end: r.end });
  }
  return merged.map((r) => ({ start: r.start, length: r.end - r.start }));
}
