import type { Worker } from 'node:worker_threads';

import { besideModule, startWorker } from '../../lib/worker-thread.js';

import { analyzeFor, type NEEDS_FALLBACK } from './analyze.js';

// A message's analysis (analyze.ts: language detection, CJK words, stems, compound parts) runs
// on a thread of its own (analyze-worker.ts), so the event loop goes on with other requests
// meanwhile (docs/search.md, "What is indexed and when"). A send still waits for its terms before
// its transaction: a message is findable once acknowledged. The thread starts at the first
// analysis; should it fail to start or end, the analysis runs on the caller's thread from then on.

type Terms = string[] | typeof NEEDS_FALLBACK;

interface Waiting {
  text: string;
  fallback: string | null | undefined;
  resolve: (terms: Terms) => void;
  reject: (err: unknown) => void;
}

/** Runs `analyze.ts` on the thread, in the order asked. */
class AnalyzerThread {
  private worker: Worker | null = null;
  private failed = false;
  private next = 1;
  private readonly waiting = new Map<number, Waiting>();

  terms(text: string, fallback: string | null | undefined): Promise<Terms> {
    const worker = this.start();
    if (!worker) return Promise.resolve(analyzeFor(text, fallback));
    const id = this.next++;
    // Kept alive only while an answer is awaited: an idle thread never holds the process open.
    if (this.waiting.size === 0) worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { text, fallback, resolve, reject });
      worker.postMessage([id, text, fallback]);
    });
  }

  /** Whether a thread is running. */
  get running(): boolean {
    return this.worker !== null;
  }

  /**
   * Ends the thread; what was waiting is answered here. The next analysis starts another.
   */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.drain();
    await worker?.terminate();
  }

  /** Answers every request still waiting from this thread. */
  private drain(): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) this.answer(w, null);
  }

  private start(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    try {
      this.worker = startWorker(besideModule(import.meta.url, 'analyze-worker'));
    } catch {
      this.failed = true;
      return null;
    }
    const worker = this.worker;
    worker.unref();
    worker.on('message', ([id, terms]: [number, Terms | null]) => {
      const waiting = this.waiting.get(id);
      if (!waiting) return;
      this.waiting.delete(id);
      if (this.waiting.size === 0) worker.unref();
      this.answer(waiting, terms);
    });
    const gone = () => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failed = true;
      this.drain();
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    return worker;
  }

  /** The thread's terms, or the analysis run here when it had none to give. */
  private answer(waiting: Waiting, terms: Terms | null): void {
    if (terms !== null) return waiting.resolve(terms);
    try {
      waiting.resolve(analyzeFor(waiting.text, waiting.fallback));
    } catch (err) {
      waiting.reject(err);
    }
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
