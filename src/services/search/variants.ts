import type { LanguageCode } from './languages.js';

// What each language's stemmer leaves apart that a person reads as one word, given as extra
// forms to stem (docs/search.md, "Languages"). Each is applied to messages and queries alike
// (a lower-cased word, diacritics kept), so it only joins forms: a wrong join costs precision,
// never recall. The labelled set (test/search/evaluation/) holds an example of each.

const ends = (w: string, pattern: RegExp, min: number) => w.length >= min && pattern.test(w);

/** Polish -ować verbs: present "pracuję", past "pracowaliśmy" are forms of "pracować". */
const POLISH_OWAC =
  /(?:uję|ujesz|uje|ujemy|ujecie|ują|owałem|owałam|owałeś|owałaś|ował|owała|owało|owaliśmy|owałyśmy|owaliście|owałyście|owali|owały)$/;
/** Turkish verb endings Snowball (nouns only) leaves: progressive, past, infinitive. */
const TURKISH_VERB =
  /(?:[ıiuü]yor(?:um|sun|uz|sunuz|lar)?|[dt][ıiuü](?:m|n|k|nız|niz|nuz|nüz|lar|ler)?|mak|mek)$/;
/** Ukrainian -ювати verbs in the present: "працюю" is a form of "працювати". */
const UKRAINIAN_YUVATY = /(?:юю|юєш|ює|юємо|юєте|юють)$/;
/** Arabic: a feminine noun's ة written ت before a pronoun suffix ("سيارتي" of "سيارة"). */
const ARABIC_TA = /ت(?:ي|ك|ه|ها|نا|هم|كم|هن|كما|هما)$/;

export const VARIANTS: Partial<Record<LanguageCode, (w: string) => string[]>> = {
  // French: the third person plural "-ent" of -er verbs ("travaillent" of "travailler"),
  // which Snowball keeps (it cannot tell it from nouns in -ent); not "-ment".
  fr: (w) => (ends(w, /[^m]ent$/, 6) ? [`${w.slice(0, -3)}er`] : []),
  // Portuguese nasal plurals: "reuniões", "pães" are plurals of "reunião", "pão".
  pt: (w) => (/(ões|ães)$/.test(w) ? [`${w.slice(0, -3)}ão`] : []),
  // Swedish: Snowball keeps the neuter definite "-et" ("huset", "mötet", "tåget") and the
  // definite "-an" of nouns in -a ("fakturan", "flickan").
  sv: (w) =>
    ends(w, /[^aeiouyåäö]et$/, 5)
      ? [w.slice(0, -2)]
      : ends(w, /[^aeiouyåäö]an$/, 6)
        ? [w.slice(0, -1)]
        : [],
  // Danish: the past tense "-ede" ("arbejdede" of "arbejde").
  da: (w) => (ends(w, /ede$/, 6) ? [w.slice(0, -2)] : []),
  // Polish: the dative and locative of -ka and -ga nouns ("książce", "nodze"); -ować verbs.
  pl: (w) => {
    const out: string[] = [];
    if (/ce$/.test(w)) out.push(`${w.slice(0, -2)}ka`);
    else if (/dze$/.test(w)) out.push(`${w.slice(0, -3)}ga`);
    const verb = POLISH_OWAC.exec(w);
    if (verb && verb.index >= 3) out.push(`${w.slice(0, verb.index)}ować`);
    return out;
  },
  // Ukrainian: the same alternation ("книжці" of "книжка", "нозі" of "нога"); the fleeting
  // "о" of "-ок" ("рахунок", "рахунки"); -ювати verbs in the present.
  uk: (w) => {
    const out: string[] = [];
    if (/ці$/.test(w)) out.push(`${w.slice(0, -2)}ка`);
    else if (/зі$/.test(w)) out.push(`${w.slice(0, -2)}га`);
    else if (ends(w, /ок$/, 5)) out.push(`${w.slice(0, -2)}к`);
    const verb = UKRAINIAN_YUVATY.exec(w);
    if (verb && verb.index >= 3) out.push(`${w.slice(0, verb.index)}ювати`);
    return out;
  },
  // Turkish: a suffix after a final vowel takes the vowel with it in Snowball's stem
  // ("toplantımız" -> "toplant"), so a word ending in a vowel is also read without it; and
  // the verb's root without its tense and person ("çalışıyorum", "çalıştık", "çalışmak").
  tr: (w) => {
    const out: string[] = [];
    if (ends(w, /[aeıioöuü]$/, 5)) out.push(w.slice(0, -1));
    const verb = w.length >= 6 ? TURKISH_VERB.exec(w) : null;
    if (verb && verb.index >= 3) out.push(w.slice(0, verb.index));
    return out;
  },
  ar: (w) => {
    const ta = ARABIC_TA.exec(w);
    return ta && ta.index >= 2 ? [`${w.slice(0, ta.index)}ة`] : [];
  },
};
