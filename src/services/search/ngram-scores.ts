import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { RecentCache } from '../../lib/recent-cache.js';

// ELD's detection (the `eld` package, `small` database), computed as ELD computes it but with
// memory: a send paid about 100 µs for ELD's n-grams, most of it building each word's n-grams
// as strings and walking each n-gram's scores for all sixty languages of the database, of which
// search keeps sixteen. Here a word's n-grams are remembered (chat repeats its words), an
// n-gram's scores in the kept languages are read from a compact table, and the sums, the
// ranking and the reliability are ELD's own (languageDetector.js, LanguageResult.js of eld 2.1).
// test/search/detect.test.ts holds the answers equal to `eld.detect` on every text of the
// evaluation set and more.
//
// ELD publishes only its detector, so its database, byte dictionary, separators and average
// scores are read from the package's own files, next to the `eld/small` entry. The database is
// not imported: as a module its object (81,206 n-grams, 141,339 scores in sixty languages) stays
// in the module map for the process's life. Its text is read once per list of languages, and
// only the n-grams having a score in a kept language are kept, in typed arrays (for the sixteen:
// 35,759 n-grams, 56,523 scores). Importing this module and making the sixteen languages'
// detector, measured after `gc()`: 19 MiB of RSS and 3.8 MiB of heap, against 152 and 45 when
// the database was imported (docs/search.md, "Which language").

const base = import.meta.resolve('eld/small');
const [{ dictionary }, { separators }, { avgScore }] = (await Promise.all([
  import(new URL('../dictionary.js', base).href),
  import(new URL('../regexPatterns.js', base).href),
  import(new URL('../avgScore.js', base).href),
])) as [{ dictionary: string[] }, { separators: RegExp }, { avgScore: Record<string, number> }];
const DATABASE = fileURLToPath(new URL('../ngrams/small.js', base));

/** ELD's answer for a text: its best language ('' for none), and its reliability and scores. */
export interface NgramResult {
  language: string;
  isReliable(): boolean;
  getScores(): Record<string, number>;
}

/** ELD subtracts this from every stored score to keep its database small. */
const BASE_NGRAM_SCORE = 53;

export interface NgramDetector {
  detect(text: string): NgramResult;
}

/**
 * The database's n-grams with a score in some kept language: for the n-gram at `index`, its
 * pairs are `slots[i]` (the language's place among the kept) and `scores[i]` (ELD's score, its
 * base added back) for `offsets[index] <= i < offsets[index + 1]`, in the database's order.
 */
export interface NgramTable {
  /** The database's index of each kept language, ascending (ELD sorts its subset). */
  kept: readonly number[];
  /** Language code by database index, for the kept ones. */
  names: Record<number, string>;
  indexOf: Map<string, number>;
  offsets: Uint32Array;
  slots: Uint8Array;
  scores: Float64Array;
}

/** ELD's `small` database, read for the languages of `codes` and kept compact. */
function loadTable(codes: readonly string[]): NgramTable {
  const data = new DatabaseText(readFileSync(DATABASE, 'utf8'));
  const languages = data.languages();
  const kept = Object.keys(languages)
    .map(Number)
    .filter((i) => codes.includes(languages[i]!))
    .sort((a, b) => a - b);
  const names: Record<number, string> = {};
  const slotOf = new Int16Array(256).fill(-1);
  kept.forEach((index, slot) => {
    names[index] = languages[index]!;
    slotOf[index] = slot;
  });

  const indexOf = new Map<string, number>();
  const offsets: number[] = [0];
  const slots: number[] = [];
  const scores: number[] = [];
  let last = '';
  data.ngrams((ngram, lang, score) => {
    const again = ngram === last;
    last = ngram;
    const slot = slotOf[lang] ?? -1;
    if (slot < 0) return;
    let index = indexOf.get(ngram);
    if (index === undefined) {
      index = offsets.length - 1;
      indexOf.set(ngram, index);
      offsets.push(slots.length);
    } else if (!again) {
      // An object literal would keep the later one; ELD's files have none.
      throw new Error(`${DATABASE}: n-gram ${JSON.stringify(ngram)} twice`);
    }
    slots.push(slot);
    scores.push(score + BASE_NGRAM_SCORE);
    offsets[index + 1] = slots.length;
  });
  return {
    kept,
    names,
    indexOf,
    offsets: Uint32Array.from(offsets),
    slots: Uint8Array.from(slots),
    scores: Float64Array.from(scores),
  };
}

/**
 * A reader of ELD's database file, `export const ngramsData = {type: …, languages: {0: 'am', …},
 * ngrams: {' qu': {6: 91, 17: 94}, …}}`: its keys bare or in single quotes (with `\'` and `\\`),
 * its scores and language indexes whole numbers. Read by hand rather than evaluated, so no object
 * of the database is ever built: evaluating it with `node:vm` and dropping the object still left
 * 119–125 MiB of RSS after `gc()` (152 MiB imported as a module).
 */
class DatabaseText {
  private at = 0;

  constructor(private readonly text: string) {}

  /** The language code of each database index. */
  languages(): Record<number, string> {
    this.seek('languages:{');
    const out: Record<number, string> = {};
    while (!this.eat('}')) {
      const index = this.number();
      this.expect(':');
      out[index] = this.key();
      this.eat(',');
    }
    return out;
  }

  /** Each (n-gram, language index, stored score) of the database, in its order. */
  ngrams(each: (ngram: string, lang: number, score: number) => void): void {
    this.seek('ngrams:{');
    while (!this.eat('}')) {
      const ngram = this.key();
      this.expect(':');
      this.expect('{');
      while (!this.eat('}')) {
        const lang = this.number();
        this.expect(':');
        each(ngram, lang, this.number());
        this.eat(',');
      }
      this.eat(',');
    }
    this.expect('}');
  }

  private seek(marker: string): void {
    const found = this.text.indexOf(marker, this.at);
    if (found < 0) this.fail(`no ${marker}`);
    this.at = found + marker.length;
  }

  private eat(char: string): boolean {
    if (this.text[this.at] !== char) return false;
    this.at += 1;
    return true;
  }

  private expect(char: string): void {
    if (!this.eat(char)) this.fail(`${char} expected`);
  }

  private number(): number {
    const start = this.at;
    while (this.at < this.text.length && isDigit(this.text.charCodeAt(this.at))) this.at += 1;
    if (this.at === start) this.fail('a number expected');
    return Number(this.text.slice(start, this.at));
  }

  /** A key or string: bare up to `:`, or single-quoted. */
  private key(): string {
    const text = this.text;
    if (!this.eat("'")) {
      const end = text.indexOf(':', this.at);
      if (end < 0) this.fail('a key expected');
      const bare = text.slice(this.at, end);
      if (!/^(?:[\p{L}_$][\p{L}\p{N}_$]*|0|[1-9][0-9]*)$/u.test(bare)) this.fail('a bare key');
      this.at = end;
      return bare;
    }
    let out = '';
    for (;;) {
      const end = text.indexOf("'", this.at);
      const escape = text.indexOf('\\', this.at);
      if (end < 0) this.fail('an unclosed string');
      if (escape < 0 || escape > end) {
        out += text.slice(this.at, end);
        this.at = end + 1;
        return out;
      }
      const escaped = text[escape + 1];
      if (escaped !== "'" && escaped !== '\\') this.fail(`escape \\${escaped}`);
      out += text.slice(this.at, escape) + escaped;
      this.at = escape + 2;
    }
  }

  private fail(what: string): never {
    throw new Error(`${DATABASE}, at ${this.at}: ${what}`);
  }
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

interface WordNgrams {
  known: Int32Array;
  unknown: readonly string[];
}

/** Tables by their languages (sorted, joined): the database is read once per list. */
const tables = new Map<string, NgramTable>();

/** The database's table for the languages of `codes`, read at the first call for them. */
export function ngramTable(codes: readonly string[]): NgramTable {
  const key = [...new Set(codes)].sort().join(',');
  let table = tables.get(key);
  if (!table) {
    table = loadTable(codes);
    tables.set(key, table);
  }
  return table;
}

/** A detector over the languages of `codes` (ELD's `setLanguageSubset`). */
export function ngramDetector(codes: readonly string[]): NgramDetector {
  const { kept, names, indexOf, offsets, slots, scores } = ngramTable(codes);
  /** A word's n-grams: the table's indexes of those it holds, and the others as written. */
  const wordNgrams = new RecentCache<string, WordNgrams>(20_000);
  const ngramsOf = (word: string): WordNgrams => {
    const known: number[] = [];
    const unknown: string[] = [];
    for (const n of ngramsOfWord(word)) {
      const index = indexOf.get(n);
      if (index === undefined) unknown.push(n);
      else known.push(index);
    }
    return { known: Int32Array.from(known), unknown };
  };
  // The text each n-gram of the table was last counted for: a text counts an n-gram once.
  const countedIn = new Uint32Array(offsets.length);
  let text = 0;

  return {
    detect(input: string): NgramResult {
      const words = utf8Words(
        input.substring(0, 1000).replace(separators, ' ').trim().toLowerCase(),
        dictionary,
      );
      if (text === 0xffffffff) {
        countedIn.fill(0);
        text = 0;
      }
      text += 1;
      const sums = new Float64Array(kept.length);
      let numNgrams = 0;
      let unknown: Set<string> | null = null;
      for (const word of words) {
        const ngrams = wordNgrams.through(word, ngramsOf);
        for (let k = 0; k < ngrams.known.length; k += 1) {
          const index = ngrams.known[k]!;
          if (countedIn[index] === text) continue;
          countedIn[index] = text;
          numNgrams += 1;
          const end = offsets[index + 1]!;
          for (let i = offsets[index]!; i < end; i += 1) sums[slots[i]!]! += scores[i]!;
        }
        for (const n of ngrams.unknown) (unknown ??= new Set()).add(n);
      }
      // ELD counts every distinct n-gram of the text, those the database lacks too. Its sums
      // are of whole numbers, the same in any order.
      numNgrams += unknown?.size ?? 0;
      // ELD's best: the first highest score above zero, in the database's order.
      let best = -1;
      for (let slot = 0; slot < kept.length; slot += 1) {
        if (sums[slot]! > 0 && (best < 0 || sums[slot]! > sums[best]!)) best = slot;
      }
      if (best < 0) return NONE;
      return ngramResult(names[kept[best]!]!, kept, sums, numNgrams, names);
    },
  };
}

const NONE: NgramResult = {
  language: '',
  isReliable: () => false,
  getScores: () => ({}),
};

/**
 * ELD's LanguageResult from the kept languages' sums: scores scaled and ranked (a stable sort,
 * so ties keep the database's order), reliable as ELD judges it, word for word.
 */
function ngramResult(
  language: string,
  kept: readonly number[],
  sums: Float64Array,
  numNgrams: number,
  names: Record<number, string>,
): NgramResult {
  let ordered: Array<[number, number]> | null = null;
  const order = () => {
    if (ordered) return ordered;
    const scale = 25;
    ordered = [];
    for (let slot = 0; slot < kept.length; slot += 1) {
      if (!(sums[slot]! > 0)) continue;
      const ngramScore = sums[slot]! / numNgrams;
      ordered.push([kept[slot]!, ngramScore / (ngramScore + scale)]);
    }
    ordered.sort((a, b) => b[1] - a[1]);
    return ordered;
  };
  return {
    language,
    isReliable(thresholdRatio = 0.75) {
      const results = order();
      if (!results.length || numNgrams < 3) return false;
      // As ELD has it: the second entry's first element (its language index, not its score).
      const nextScore = results.length > 1 ? results[1]![0] : 0;
      return !(
        avgScore[language]! * thresholdRatio > results[0]![1] ||
        0.01 > Math.abs(results[0]![1] - nextScore)
      );
    },
    getScores() {
      const scores: Record<string, number> = {};
      for (const [index, score] of order()) scores[names[index]!] = score;
      return scores;
    },
  };
}

/** ELD's n-grams of a word: 4 bytes with a stride of 3, the first and last marked by spaces. */
function ngramsOfWord(word: string): string[] {
  const out: string[] = [];
  const len = Math.min(word.length, 70);
  let j = 0;
  for (; j + 4 < len; j += 3) out.push((j === 0 ? ' ' : '') + word.substring(j, j + 4));
  out.push((j === 0 ? ' ' : '') + word.substring(len !== 3 ? len - 4 : 0) + ' ');
  return out;
}

/**
 * ELD's strToUtf8Bytes: the text's words, each UTF-8 byte one character of its dictionary, cut
 * at the first space after 350 bytes, or at any character after 380.
 */
function utf8Words(str: string, dictionary: string[]): string[] {
  let encoded = '';
  const words: string[] = [];
  let countBytes = 0;
  const cutAfter = 350;
  const enforceCutAfter = 380;
  for (let ii = 0; ii < str.length; ii++) {
    let charCode = str.charCodeAt(ii);
    if (charCode < 0x80) {
      if (charCode === 32) {
        if (encoded !== '') {
          words.push(encoded);
          encoded = '';
        }
        if (countBytes > cutAfter) break;
      } else {
        encoded += str[ii];
      }
      countBytes++;
    } else if (charCode < 0x800) {
      encoded += dictionary[0xc0 | (charCode >> 6)]! + dictionary[0x80 | (charCode & 0x3f)]!;
      countBytes += 2;
    } else if (charCode < 0xd800 || charCode >= 0xe000) {
      encoded +=
        dictionary[0xe0 | (charCode >> 12)]! +
        dictionary[0x80 | ((charCode >> 6) & 0x3f)]! +
        dictionary[0x80 | (charCode & 0x3f)]!;
      countBytes += 3;
    } else {
      ii++;
      charCode = 0x10000 + (((charCode & 0x3ff) << 10) | (str.charCodeAt(ii) & 0x3ff));
      encoded +=
        dictionary[0xf0 | (charCode >> 18)]! +
        dictionary[0x80 | ((charCode >> 12) & 0x3f)]! +
        dictionary[0x80 | ((charCode >> 6) & 0x3f)]! +
        dictionary[0x80 | (charCode & 0x3f)]!;
      countBytes += 4;
    }
    if (countBytes > enforceCutAfter) break;
  }
  if (encoded !== '') words.push(encoded);
  return words;
}
