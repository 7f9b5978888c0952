import { besideModule, startWorker, WorkerCalls } from '../../lib/worker-thread.js';

import { analyzeFor, type NEEDS_FALLBACK } from './analyze.js';

// A message's analysis (analyze.ts: language detection, CJK words, stems, compound parts) runs
// on a thread of its own (analyze-worker.ts), so the event loop goes on with other requests
// meanwhile (docs/search.md, "What is indexed and when"). A send still waits for its terms before
// its transaction, so they are there to write with it (or to hold: held-terms.ts). The thread
// starts at the first analysis; should it fail to start or end, the analysis runs on the
// caller's thread from then on.

type Terms = string[] | typeof NEEDS_FALLBACK;
type Request = [text: string, fallback: string | null | undefined];

/** Runs `analyze.ts` on the thread; null from it (the analysis threw) runs it here. */
class AnalyzerThread {
  private calls: WorkerCalls<Request, Terms | null> | null = null;
  private failed = false;

  async terms(text: string, fallback: string | null | undefined): Promise<Terms> {
    const calls = this.start();
    const terms = calls?.running ? await calls.call([text, fallback]) : null;
    return terms ?? analyzeFor(text, fallback);
  }

  /** Whether a thread is running. */
  get running(): boolean {
    return this.calls?.running ?? false;
  }

  /** Ends the thread; what was waiting is answered here. The next analysis starts another. */
  async stop(): Promise<void> {
    const calls = this.calls;
    this.calls = null;
    await calls?.end();
  }

  private start(): WorkerCalls<Request, Terms | null> | null {
    if (this.calls || this.failed) return this.calls;
    try {
      const worker = startWorker(besideModule(import.meta.url, 'analyze-worker'));
      this.calls = new WorkerCalls<Request, Terms | null>(worker, () => null);
    } catch {
      this.failed = true;
    }
    return this.calls;
  }
}

const thread = new AnalyzerThread();

/** `analyzeFor` on the analysis thread. */
export function analyzeOffLoop(text: string, fallback?: string | null): Promise<Terms> {
  return thread.terms(text, fallback);
}

/** Whether the analysis thread is running (tests). */
export function analysisThreadRunning(): boolean {
  return thread.running;
}

/** Ends the analysis thread, answering what waits here (tests). */
export function stopAnalysisThread(): Promise<void> {
  return thread.stop();
}
