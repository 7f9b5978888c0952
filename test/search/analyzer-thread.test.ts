import { describe, expect, it } from 'vitest';

import {
  analyzeFor,
  analyzeForFromRecent,
  analyzeText,
  NEEDS_FALLBACK,
} from '../../src/services/search/analyze.js';
import { foldText, isCjkChar } from '../../src/services/search/tokenize.js';
import {
  analysisThreadAsked,
  analysisThreadRunning,
  analyzeMessage,
  analyzeOffLoop,
  INLINE_CHARS,
  stopAnalysisThread,
} from '../../src/services/search/analyzer.js';

import { MESSAGES } from './labelled-set.js';

// A message's analysis runs on a thread of its own (src/services/search/analyzer.ts), off the
// event loop: its terms are the same as made here, a text too short to tell its language asks
// for the fallback, and a thread that ends leaves nobody waiting. A short text of words the
// thread has analyzed lately is analyzed on the caller's thread, with the same terms, and so is
// one whose CJK chunks were segmented lately; a new word, a new chunk or a long text still goes
// to the thread.

const TEXTS = [
  'The quarterly reports were reviewed by the whole team on Friday',
  'Die Donaudampfschifffahrtsgesellschaft meldet heute neue Fahrpläne für den Sommer',
  'Встреча в Москве перенесена на следующую неделю из-за погоды',
  '東京の会議は来週に延期されました、猫が好きです',
  'Toplantıda yeni raporları tartıştık ve kararlar aldık',
  'see https://example.org/plan for the plan',
];

describe('the analysis thread', () => {
  it('gives the terms analyze.ts gives, from a thread of its own', async () => {
    for (const text of TEXTS) expect(await analyzeOffLoop(text)).toEqual(analyzeText(text, null));
    expect(analysisThreadRunning()).toBe(true);
  });

  it('asks for the fallback language of a text it cannot tell, and uses it', async () => {
    const short = 'banken';
    expect(analyzeFor(short)).toBe(NEEDS_FALLBACK);
    expect(await analyzeOffLoop(short)).toBe(NEEDS_FALLBACK);
    expect(await analyzeOffLoop(short, 'de')).toEqual(analyzeText(short, 'de'));
  });

  it('answers every request waiting when the thread ends, and starts another after', async () => {
    const asked = Array.from({ length: 50 }, (_, i) => analyzeOffLoop(`${TEXTS[i % 5]} ${i}`));
    await stopAnalysisThread();
    expect(analysisThreadRunning()).toBe(false);
    const got = await Promise.all(asked);
    got.forEach((terms, i) => expect(terms).toEqual(analyzeText(`${TEXTS[i % 5]} ${i}`, null)));
    expect(await analyzeOffLoop(TEXTS[0]!)).toEqual(analyzeText(TEXTS[0]!, null));
    expect(analysisThreadRunning()).toBe(true);
  });

  it('analyzes a short text of words analyzed lately here, and a new word on the thread', async () => {
    // Words of no other test: this thread has never analyzed them.
    const text = 'Die Zuckerbäckereiverwaltungen tagten gestern im Rathaussaal';
    const again = 'Gestern tagten die Zuckerbäckereiverwaltungen';
    expect(analyzeForFromRecent(text, 'de')).toBeNull();
    const asked = analysisThreadAsked();
    const fromThread = await analyzeMessage(text, 'de');
    expect(analysisThreadAsked()).toBe(asked + 1);
    // The thread's answer taught this thread the words: the next text of them stays here,
    // answered at once (no promise) and with the terms the analysis gives.
    const here = analyzeMessage(again, 'de');
    expect(Array.isArray(here)).toBe(true);
    expect(analysisThreadAsked()).toBe(asked + 1);
    await stopAnalysisThread();
    expect(analyzeMessage(text, 'de')).toEqual(fromThread);
    expect(analysisThreadRunning()).toBe(false);
    expect(fromThread).toEqual(analyzeText(text, 'de'));
    expect(here).toEqual(analyzeText(again, 'de'));
    expect(fromThread).toEqual(expect.arrayContaining(['zuckerbackereiverwaltungen']));
  });

  it('hands a long text to the thread even when its words are known', async () => {
    const words = 'the quarterly reports were reviewed by the whole team ';
    analyzeText(words, 'en');
    const long = words.repeat(Math.ceil((INLINE_CHARS + 1) / words.length));
    const asked = analysisThreadAsked();
    const terms = await analyzeMessage(long, 'en');
    expect(analysisThreadAsked()).toBe(asked + 1);
    expect(terms).toEqual(analyzeText(long, 'en'));
  });

  it('segments a new chunk of CJK on the thread, and a chunk seen lately here', async () => {
    // Chunks of no other test.
    const text = '週末は鎌倉で紫陽花を見ました 楽しかった';
    const again = '楽しかった 週末は鎌倉で紫陽花を見ました';
    const asked = analysisThreadAsked();
    const fromThread = await analyzeMessage(text, null);
    expect(analysisThreadAsked()).toBe(asked + 1);
    const here = analyzeMessage(again, null);
    expect(Array.isArray(here)).toBe(true);
    expect(analysisThreadAsked()).toBe(asked + 1);
    expect(fromThread).toEqual(analyzeText(text, null));
    expect(here).toEqual(analyzeText(again, null));
  });

  it('keeps no word or chunk longer than a real one, so such a text goes to the thread each time', async () => {
    const long = `report ${'x'.repeat(60)} 東京${'の'.repeat(60)}`;
    const asked = analysisThreadAsked();
    const first = await analyzeMessage(long, 'en');
    const second = await analyzeMessage(long, 'en');
    expect(analysisThreadAsked()).toBe(asked + 2);
    expect(first).toEqual(analyzeText(long, 'en'));
    expect(second).toEqual(first);
  });

  it('finds the one-character CJK words a chunk at a time as in the whole text', () => {
    const segmenters = {
      ja: new Intl.Segmenter('ja', { granularity: 'word' }),
      zh: new Intl.Segmenter('zh', { granularity: 'word' }),
    };
    const texts = [
      ...Object.values(MESSAGES),
      ...TEXTS,
      '東京 都',
      '東京　都に行く',
      '猫 が 好き',
      'これは テスト です',
      '我 明天 去 北京',
      '今日は晴れ 報告書 w29s1 新しいリリース 修正しました',
      '会议记录 南京大学 请检查服务器 臺灣',
    ];
    let cjk = 0;
    for (const text of texts) {
      const folded = foldText(text);
      if (!/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(folded)) continue;
      cjk += 1;
      const kana = /[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(folded);
      const whole = [...(kana ? segmenters.ja : segmenters.zh).segment(folded)]
        .filter((s) => s.isWordLike && [...s.segment].length === 1 && isCjkChar(s.segment))
        .filter((s) => !/\p{Script=Hangul}/u.test(s.segment))
        .map((s) => s.segment);
      const terms = new Set(analyzeText(text, null));
      for (const w of whole) expect(terms, `${w} in ${text}`).toContain(w);
    }
    expect(cjk).toBeGreaterThan(10);
  });
});
