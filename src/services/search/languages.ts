import { createRequire } from 'node:module';

import { stemmer as arabic } from '@orama/stemmers/arabic';
import { stemmer as danish } from '@orama/stemmers/danish';
import { stemmer as dutch } from '@orama/stemmers/dutch';
import { stemmer as finnish } from '@orama/stemmers/finnish';
import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as norwegian } from '@orama/stemmers/norwegian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { stemmer as swedish } from '@orama/stemmers/swedish';
import { stemmer as turkish } from '@orama/stemmers/turkish';
import { stemmer as ukrainian } from '@orama/stemmers/ukrainian';

import { VARIANTS } from './variants.js';

// The languages search stems (docs/search.md, "Languages"), each with its stemmer and the one
// character that marks its stems in the index. Stemmers come from Snowball-family libraries
// (docs/dependencies.md): @orama/stemmers for fourteen languages (Snowball's own algorithms),
// @nlpjs for English (Snowball's Porter2; Orama's English is the older Porter, which splits
// "deploy" from "deployment") and Polish (Snowball has no Polish stemmer on npm).

const require = createRequire(import.meta.url);

interface NlpStemmer {
  stemWord(word: string): string;
}
type NlpModule = Record<string, new () => NlpStemmer>;

function nlpStemmer(pkg: string, name: string): (word: string) => string {
  let stemmer: NlpStemmer | null = null;
  return (word) => {
    // Loaded on first use: its module graph costs a few milliseconds at start.
    stemmer ??= new (require(pkg) as NlpModule)[name]!();
    return stemmer.stemWord(word);
  };
}

export type LanguageCode =
  | 'en'
  | 'de'
  | 'fr'
  | 'es'
  | 'it'
  | 'pt'
  | 'nl'
  | 'sv'
  | 'no'
  | 'da'
  | 'fi'
  | 'ru'
  | 'uk'
  | 'pl'
  | 'tr'
  | 'ar';

export type Script = 'latin' | 'cyrillic' | 'arabic';

export interface Language {
  code: LanguageCode;
  name: string;
  script: Script;
  /** Lower-cased word (diacritics kept, as the stemmer expects) to its stem. */
  stem: (word: string) => string;
  /**
   * The character that begins this language's stems and compound parts in the index. Each is
   * one that NFKC folding never leaves in a word (punctuation and symbols of Latin-1), so a
   * stem term can never equal an exact word, and two languages' stems never meet.
   */
  mark: string;
  /** Whether compounds are split (compounds.ts). */
  compounds: boolean;
  /**
   * Other forms of a lower-cased word whose stems it is indexed and searched under too: the
   * alternations Snowball's algorithm for the language leaves apart (variants.ts).
   */
  variants?: (word: string) => string[];
}

const table: Array<Omit<Language, 'mark'>> = [
  {
    code: 'en',
    name: 'English',
    script: 'latin',
    stem: nlpStemmer('@nlpjs/lang-en-min', 'StemmerEn'),
    compounds: false,
  },
  { code: 'de', name: 'German', script: 'latin', stem: german, compounds: true },
  { code: 'fr', name: 'French', script: 'latin', stem: french, compounds: false },
  { code: 'es', name: 'Spanish', script: 'latin', stem: spanish, compounds: false },
  { code: 'it', name: 'Italian', script: 'latin', stem: italian, compounds: false },
  { code: 'pt', name: 'Portuguese', script: 'latin', stem: portuguese, compounds: false },
  { code: 'nl', name: 'Dutch', script: 'latin', stem: dutch, compounds: true },
  { code: 'sv', name: 'Swedish', script: 'latin', stem: swedish, compounds: true },
  { code: 'no', name: 'Norwegian', script: 'latin', stem: norwegian, compounds: false },
  { code: 'da', name: 'Danish', script: 'latin', stem: danish, compounds: false },
  { code: 'fi', name: 'Finnish', script: 'latin', stem: finnish, compounds: false },
  {
    code: 'pl',
    name: 'Polish',
    script: 'latin',
    stem: nlpStemmer('@nlpjs/lang-pl', 'StemmerPl'),
    compounds: false,
  },
  { code: 'tr', name: 'Turkish', script: 'latin', stem: turkish, compounds: false },
  { code: 'ru', name: 'Russian', script: 'cyrillic', stem: russian, compounds: false },
  { code: 'uk', name: 'Ukrainian', script: 'cyrillic', stem: ukrainian, compounds: false },
  { code: 'ar', name: 'Arabic', script: 'arabic', stem: arabic, compounds: false },
];

// ¡ ¢ £ ¤ ¥ ¦ § ¨ © « ¬ ® ¯ ° ± ´: none is a letter or digit, and none survives NFKC + the
// tokenizer as part of a word.
const MARKS = '¡¢£¤¥¦§¨©«¬®¯°±´';

export const LANGUAGES: readonly Language[] = table.map((l, i) => ({
  ...l,
  mark: MARKS[i]!,
  variants: VARIANTS[l.code],
}));

export const LANGUAGE_CODES = LANGUAGES.map((l) => l.code);

const byCode = new Map(LANGUAGES.map((l) => [l.code as string, l]));

export function languageOf(code: string | null | undefined): Language | undefined {
  return code ? byCode.get(code) : undefined;
}

export function isLanguageCode(code: string): code is LanguageCode {
  return byCode.has(code);
}

/** The languages written in `script`. */
export function languagesOfScript(script: Script): Language[] {
  return LANGUAGES.filter((l) => l.script === script);
}

/** The mark of pseudo-terms that are no word: `has:link` is indexed as `¶link`. */
export const FLAG_MARK = '¶';
export const HAS_LINK_TERM = `${FLAG_MARK}link`;

/** Whether an index term is a stem, a compound part or a flag (not an exact word). */
export function isMarkedTerm(term: string): boolean {
  return MARKS.includes(term[0]!) || term[0] === FLAG_MARK;
}

/** The script of a lower-cased word, or null (digits only, or a script search does not stem). */
export function scriptOf(word: string): Script | null {
  for (const ch of word) {
    const code = ch.codePointAt(0)!;
    if (code >= 0x0400 && code <= 0x052f) return 'cyrillic';
    if ((code >= 0x0600 && code <= 0x06ff) || (code >= 0x0750 && code <= 0x077f)) return 'arabic';
    if (/\p{Script=Latin}/u.test(ch)) return 'latin';
  }
  return null;
}
