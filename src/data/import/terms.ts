import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { startWorker, WorkerCalls } from '../../lib/worker-thread.js';
import { analyzeText } from '../../services/search/index.js';

// The search terms of imported messages. Working them out (language detection, stemming) costs
// as much as writing the messages, so an import hands each batch's texts to a worker thread and
// writes the batch meanwhile: on two cores the two take turns less. The worker runs the built
// script, or its source when this process runs under tsx; elsewhere (vitest's own loader) the
// terms are worked out in this thread.

export interface TermAnalyzer {
  /** Each text's terms joined by spaces ('' for none, and for null). */
  analyze(texts: readonly (string | null)[]): Promise<string[]>;
  close(): Promise<void>;
}

export function startTermAnalyzer(): TermAnalyzer {
  const built = fileURLToPath(new URL('./term-worker.js', import.meta.url));
  const source = fileURLToPath(new URL('./term-worker.ts', import.meta.url));
  const underTsx = process.execArgv.some((a) => /\btsx\b/.test(a));
  const script = fs.existsSync(built) ? built : underTsx && fs.existsSync(source) ? source : null;
  if (script === null) return inline;
  const calls = new WorkerCalls<(string | null)[], string[]>(
    startWorker(pathToFileURL(script)),
    (_, cause) => {
      throw cause instanceof Error ? cause : new Error('the search terms worker stopped');
    },
  );
  return {
    analyze: (texts) => calls.call([...texts]),
    close: () => calls.end(),
  };
}

const inline: TermAnalyzer = {
  analyze: async (texts) => texts.map((t) => (t === null ? '' : analyzeText(t, null).join(' '))),
  close: async () => {},
};
