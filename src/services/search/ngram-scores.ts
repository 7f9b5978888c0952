import { RecentCache } from '../../lib/recent-cache.js';

// ELD's detection (the `eld` package, `small` database), computed as ELD computes it but with
// memory: a send paid about 100 µs for ELD's n-grams, most of it building each word's n-grams
// as strings and walking each n-gram's scores for all sixty languages of the database, of which
// search keeps sixteen. Here a word's n-grams and an n-gram's scores in the kept languages are
// remembered (chat repeats its words), and the sums, the ranking and the reliability are
// ELD's own (languageDetector.js, LanguageResult.js of eld 2.1). test/search/detect.test.ts
// holds the answers equal to `eld.detect` on every text of the evaluation set and more.
//
// ELD publishes only its detector, so its database, byte dictionary, separators and average
// scores are read from the package's own files, next to the `eld/small` entry.

interface NgramData {
  languages: Record<string, string>;
  ngrams: Record<string, Record<string, number>>;
}

const base = import.meta.resolve('eld/small');
const [{ ngramsData }, { dictionary }, { separators }, { avgScore }] = (await Promise.all([
  import(new URL('../ngrams/small.js', base).href),
  import(new URL('../dictionary.js', base).href),
  import(new URL('../regexPatterns.js', base).href),
  import(new URL('../avgScore.js', base).href),
])) as [
  { ngramsData: NgramData },
  { dictionary: string[] },
  { separators: RegExp },
  { avgScore: Record<string, number> },
];

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

/** A detector over the languages of `codes` (ELD's `setLanguageSubset`). */
export function ngramDetector(codes: readonly string[]): NgramDetector {
  const names = ngramsData.languages;
  // The database's index of each kept language, ascending (ELD sorts its subset).
  const kept = Object.keys(names)
    .map(Number)
    .filter((i) => codes.includes(names[i]!))
    .sort((a, b) => a - b);
  const slotOf = new Map(kept.map((index, slot) => [String(index), slot]));

  /** An n-gram's scores in the kept languages: pairs of (slot, score), flat. */
  const ngramScores = new RecentCache<string, Float64Array>(50_000);
  const scoresOf = (ngram: string): Float64Array => {
    const stored = ngramsData.ngrams[ngram];
    const pairs: number[] = [];
    for (const lang in stored) {
      const slot = slotOf.get(lang);
      if (slot !== undefined) pairs.push(slot, stored[lang]! + BASE_NGRAM_SCORE);
    }
    return new Float64Array(pairs);
  };
  const wordNgrams = new RecentCache<string, readonly string[]>(20_000);

  return {
    detect(input: string): NgramResult {
      const words = utf8Words(
        input.substring(0, 1000).replace(separators, ' ').trim().toLowerCase(),
        dictionary,
      );
      const ngrams = new Set<string>();
      for (const word of words) {
        for (const n of wordNgrams.through(word, ngramsOfWord)) ngrams.add(n);
      }
      const sums = new Float64Array(kept.length);
      for (const n of ngrams) {
        const pairs = ngramScores.through(n, scoresOf);
        for (let i = 0; i < pairs.length; i += 2) sums[pairs[i]!]! += pairs[i + 1]!;
      }
      // ELD's best: the first highest score above zero, in the database's order.
      let best = -1;
      for (let slot = 0; slot < kept.length; slot += 1) {
        if (sums[slot]! > 0 && (best < 0 || sums[slot]! > sums[best]!)) best = slot;
      }
      if (best < 0) return NONE;
      return ngramResult(names[kept[best]!]!, kept, sums, ngrams.size, names);
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
  names: Record<string, string>,
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
