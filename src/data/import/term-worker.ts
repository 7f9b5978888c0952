import { parentPort } from 'node:worker_threads';

import { analyzeText } from '../../services/search/index.js';

// A worker thread of `svc import` (terms.ts, through `WorkerCalls`): the search terms of a
// batch's texts, [id, texts] answered by [id, terms], worked out while the import's own thread
// writes the batch.

parentPort?.on('message', ([id, texts]: [number, (string | null)[]]) => {
  const terms = texts.map((t) => (t === null ? '' : analyzeText(t, null).join(' ')));
  parentPort!.postMessage([id, terms]);
});
