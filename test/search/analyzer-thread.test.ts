import { describe, expect, it } from 'vitest';

import { analyzeFor, analyzeText, NEEDS_FALLBACK } from '../../src/services/search/analyze.js';
import {
  analysisThreadRunning,
  analyzeOffLoop,
  stopAnalysisThread,
} from '../../src/services/search/analyzer.js';

// A message's analysis runs on a thread of its own (src/services/search/analyzer.ts), off the
// event loop: its terms are the same as made here, a text too short to tell its language asks
// for the fallback, and a thread that ends leaves nobody waiting.

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
});
