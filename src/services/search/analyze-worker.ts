import { parentPort } from 'node:worker_threads';

import { analyzeFor, type NEEDS_FALLBACK } from './analyze.js';

// The search analysis's own thread (analyzer.ts, through `WorkerCalls`): a request is
// [id, [text, fallback]], its answer [id, terms or NEEDS_FALLBACK], or [id, null] when the
// analysis threw (the caller then runs it itself, so the error is the caller's).

parentPort!.on(
  'message',
  ([id, [text, fallback]]: [number, [string, string | null | undefined]]) => {
    let terms: string[] | typeof NEEDS_FALLBACK | null;
    try {
      terms = analyzeFor(text, fallback);
    } catch {
      terms = null;
    }
    parentPort!.postMessage([id, terms]);
  },
);
