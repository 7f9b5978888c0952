import { describe, expect, it } from 'vitest';
import {
  foldText,
  indexTerms,
  isCjkChar,
  isWordChar,
  queryTerms,
  tokenize,
} from '../../src/services/search/tokenize.js';

// The rules as first written, character by character through Unicode's tables, without the
// shortcut for ASCII: what the tokenizer must still answer for every text.
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]/u;
const WORD = /[\p{L}\p{N}\p{M}]/u;
function foldByTables(text: string): string {
  const lowered = text.normalize('NFKC').toLowerCase().replace(/ß/g, 'ss').replace(/ς/g, 'σ');
  let out = '';
  for (const ch of lowered) {
    out += CJK.test(ch) ? ch : ch.normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');
  }
  return out.normalize('NFKC');
}
function tokenizeByTables(text: string): string[] {
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
  for (const ch of foldByTables(text)) {
    if (CJK.test(ch)) {
      flushWord();
      cjk.push(ch);
    } else if (WORD.test(ch)) {
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

describe('search tokenizer', () => {
  const cases: Array<[string, string, string[]]> = [
    [
      'English words, case folded',
      'Hello, World! Release 2.0',
      ['hello', 'world', 'release', '2', '0'],
    ],
    ['French accents removed', 'Café crème à Noël', ['cafe', 'creme', 'a', 'noel']],
    ['German sharp s and umlauts', 'Straße Größe ÜBER', ['strasse', 'grosse', 'uber']],
    ['full-width letters via NFKC', 'ＡＢＣ１２３', ['abc123']],
    ['Japanese bigrams', '東京都に行く', ['東京', '京都', '都に', 'に行', '行く']],
    ['Katakana keeps voicing marks', 'データ', ['デー', 'ータ']],
    ['Chinese simplified', '北京大学', ['北京', '京大', '大学']],
    ['Chinese traditional', '臺灣', ['臺灣']],
    ['Korean Hangul bigrams', '서울에서', ['서울', '울에', '에서']],
    ['single CJK character kept', '猫', ['猫']],
    ['mixed text splits at script changes', 'iPhoneを買った', ['iphone', 'を買', '買っ', 'った']],
    ['punctuation only', '!!! ...', []],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      expect(tokenize(input)).toEqual(expected);
    });
  }

  it('folds like for like', () => {
    expect(foldText('Ｃａｆé')).toBe('cafe');
    expect(foldText('ΣΟΦΟΣ')).toBe('σοφοσ');
  });

  it('a CJK query of two or more characters is a subset of the index terms of any text containing it', () => {
    const text = '明日は東京都庁で会議があります';
    const index = new Set(indexTerms(text));
    for (const q of ['東京', '東京都', '都庁で会議', '会議があります']) {
      for (const t of queryTerms(q)) expect(index.has(t)).toBe(true);
    }
    expect(queryTerms('大阪').every((t) => index.has(t))).toBe(false);
  });

  it('index terms are distinct', () => {
    expect(indexTerms('la la la')).toEqual(['la']);
  });

  it('ASCII, alone and mixed with other scripts, gives the terms the Unicode tables give', () => {
    const ascii = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i));
    const others = [
      'é',
      'É',
      'ß',
      'Σ',
      'ς',
      'ｆ',
      '１',
      '\u0301',
      'İ',
      '東',
      'デ',
      '서',
      '·',
      '—',
      '😀',
    ];
    for (const ch of ascii) {
      for (const text of [ch, `a${ch}b`, `${ch}1${ch}`, `東${ch}京`, `e${ch}\u0301`]) {
        expect(foldText(text), JSON.stringify(text)).toBe(foldByTables(text));
        expect(tokenize(text), JSON.stringify(text)).toEqual(tokenizeByTables(text));
      }
      expect(isWordChar(ch), JSON.stringify(ch)).toBe(WORD.test(ch));
      expect(isCjkChar(ch), JSON.stringify(ch)).toBe(CJK.test(ch));
    }
    // Texts drawn from both, with a fixed seed so that a failure repeats.
    let seed = 20;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 3000; i += 1) {
      let text = '';
      const pool = i % 2 === 0 ? ascii : [...ascii, ...others];
      for (let n = next(40); n > 0; n -= 1) text += pool[next(pool.length)];
      expect(tokenize(text), JSON.stringify(text)).toEqual(tokenizeByTables(text));
      expect(foldText(text), JSON.stringify(text)).toBe(foldByTables(text));
    }
  });
});
