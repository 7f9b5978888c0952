import { describe, expect, it } from 'vitest';
import { foldText, indexTerms, queryTerms, tokenize } from '../../src/services/search/tokenize.js';

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
});
