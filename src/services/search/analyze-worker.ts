import { parentPort } from 'node:worker_threads';

import { analyzeFor, wordsOf } from './analyze.js';
import type { AnalysisAnswer, AnalysisRequest } from './analyzer.js';

// The search analysis's own thread (analyzer.ts, through `WorkerCalls`): a request is
// [id, { texts: [text, fallback][], learn }], its answer [id, one entry a text: [terms or
// NEEDS_FALLBACK, the text's words as its recent words hold them (when `learn`)], or null where
// the analysis threw (the caller then runs it itself, so the error is the caller's)]. The words
// go back so the caller's thread analyzes the next text made of them itself (analyzer.ts).

parentPort!.on('message', ([id, { texts, learn }]: [number, AnalysisRequest]) => {
  const answer: AnalysisAnswer = texts.map(([text, fallback]) => {
    try {
      const terms = analyzeFor(text, fallback);
      return [terms, learn && Array.isArray(terms) ? wordsOf(text, fallback ?? null) : []];
    } catch {
      return null;
    }
  });
  parentPort!.postMessage([id, answer]);
});
