// One tokenizer writes the search index terms for both databases, so SQLite and PostgreSQL
// cannot diverge (see docs/search.md once written; issue: search in any language).
//
// Rules:
// - Text is normalized with Unicode NFKC and lower-cased (full-width letters become ASCII,
//   "ß" folds to "ss", final sigma to sigma).
// - Outside CJK, diacritics are removed ("Café" -> "cafe") and a word is a run of letters and
//   digits; each word is one term.
// - Han, Hiragana, Katakana and Hangul have no spaces between words: a run of them becomes
//   overlapping bigrams ("東京都" -> "東京", "京都"), so any substring of two or more characters
//   matches. A run of a single character is kept as one term.
// - Mixed text splits at every change between CJK and other scripts.

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]/u;
const WORD = /[\p{L}\p{N}\p{M}]/u;
const MARKS = /\p{M}/gu;

/**
 * Whether `text` is ASCII only. ASCII is its own NFKC form and has no diacritics, so folding it
 * is lower-casing, and its word characters are letters and digits. Most messages are ASCII: the
 * Unicode path (two normalizations and a pattern per character) was about 90,000 instructions
 * of a 40-character send (bench `instructions`).
 */
function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) >= 0x80) return false;
  return true;
}

const ASCII_WORDS = /[A-Za-z0-9]+/g;

/** Whether the character with code `code` (below 0x80) is a letter or a digit. */
const isAsciiWord = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) || ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a);

/** Whether a folded character is CJK (bigrammed) by the rules above. */
export const isCjkChar = (ch: string): boolean => ch.charCodeAt(0) >= 0x80 && CJK.test(ch);

/** Whether a folded character belongs to a word (letters, digits, marks) outside CJK. */
export const isWordChar = (ch: string): boolean => {
  const code = ch.charCodeAt(0);
  return code < 0x80 ? isAsciiWord(code) : WORD.test(ch);
};

function foldChar(ch: string): string {
  if (CJK.test(ch)) return ch;
  return ch.normalize('NFD').replace(MARKS, '').normalize('NFC');
}

/** NFKC, case folding and (outside CJK) diacritics removal, character by character. */
export function foldText(text: string): string {
  if (isAscii(text)) return text.toLowerCase();
  const lowered = text.normalize('NFKC').toLowerCase().replace(/ß/g, 'ss').replace(/ς/g, 'σ');
  let out = '';
  for (const ch of lowered) out += ch.charCodeAt(0) < 0x80 ? ch : foldChar(ch);
  return out.normalize('NFKC');
}

/** The terms of a text, in order, with repeats: words, and CJK bigrams. */
export function tokenize(text: string): string[] {
  const folded = foldText(text);
  if (isAscii(folded)) return folded.match(ASCII_WORDS) ?? [];
  const terms: string[] = [];
  let word = '';
  let cjk: string[] = [];
  const flushWord = () => {
    if (word) terms.push(word);
    word = '';
  };
  const flushCjk = () => {
    if (cjk.length === 1) terms.push(cjk[0]!);
    for (let i = 0; i + 1 < cjk.length; i++) terms.push(cjk[i]! + cjk[i + 1]!);
    cjk = [];
  };
  for (const ch of folded) {
    const code = ch.charCodeAt(0);
    if (code >= 0x80 && CJK.test(ch)) {
      flushWord();
      cjk.push(ch);
    } else if (code < 0x80 ? isAsciiWord(code) : WORD.test(ch)) {
      flushCjk();
      word += ch;
    } else {
      flushWord();
      flushCjk();
    }
  }
  flushWord();
  flushCjk();
  return terms;
}

/** The distinct terms to store in the index for a message body. */
export function indexTerms(text: string): string[] {
  return [...new Set(tokenize(text))];
}

/** The distinct terms a query must all find (AND). Empty when the query has no word. */
export function queryTerms(text: string): string[] {
  return [...new Set(tokenize(text))];
}
