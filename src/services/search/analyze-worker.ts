import { parentPort } from 'node:worker_threads';

import { analyzeFor, wordsOf, type LearnedWords, type NEEDS_FALLBACK } from './analyze.js';

// The search analysis's own thread (analyzer.ts, through `WorkerCalls`): a request is
// [id, [text, fallback]], its answer [id, [terms or NEEDS_FALLBACK, the text's words as its
// recent words hold them]], or [id, null] when the analysis threw (the caller then runs it
// itself, so the error is the caller's). The words go back so the caller's thread analyzes
// the next text made of them itself (analyzer.ts).

parentPort!.on(
  'message',
  ([id, [text, fallback]]: [number, [string, string | null | undefined]]) => {
    let answer: [string[] | typeof NEEDS_FALLBACK, LearnedWords] | null;
    try {
      const terms = analyzeFor(text, fallback);
      answer = [terms, Array.isArray(terms) ? wordsOf(text, fallback ?? null) : []];
    } catch {
      answer = null;
    }
    parentPort!.postMessage([id, answer]);
  },
);
