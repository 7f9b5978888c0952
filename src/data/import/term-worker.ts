import { parentPort } from 'node:worker_threads';

import { analyzeText } from '../../services/search/index.js';

// A worker thread of `svc import` (terms.ts): the search terms of a batch's texts, worked out
// while the import's own thread writes the batch.

parentPort?.on('message', (job: { id: number; texts: (string | null)[] }) => {
  const terms = job.texts.map((t) => (t === null ? '' : analyzeText(t, null).join(' ')));
  parentPort!.postMessage({ id: job.id, terms });
});
