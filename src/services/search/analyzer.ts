import { besideModule, startWorker, WorkerCalls } from '../../lib/worker-thread.js';

import {
  analyzeFor,
  analyzeForFromRecent,
  learnWords,
  type LearnedWords,
  type NEEDS_FALLBACK,
} from './analyze.js';

// A message's analysis (analyze.ts: language detection, CJK words, stems, compound parts) runs
// on a thread of its own (analyze-worker.ts) when it has work to do, so the event loop goes on
// with other requests meanwhile (docs/search.md, "What is indexed and when"). A send on
// PostgreSQL, and an edit, waits for its terms before its transaction, so they are there to
// write with it; on SQLite's server a send's short text is held and analyzed after the send,
// with the other held texts, in one hop (`analyzeBatch`, held-terms.ts). The thread starts at
// the first analysis; should it fail to start or end, the analysis runs on the caller's thread
// from then on.
//
// Most texts have no work to do: chat repeats its words, and a word's stems and compound parts
// are kept once made, and so are the words Intl.Segmenter finds in a chunk of Japanese or
// Chinese (analyze.ts, the recent words). A short text whose words and chunks were all analyzed
// lately is analyzed here (`analyzeMessage`): a few microseconds of detection and lookups, where
// the hop to the thread and back cost tens of microseconds of wake-ups a send, more under load
// (docs/search.md, "What is indexed and when"). Any other text goes to the thread, which sends
// its words' and chunks' terms back with its answer, so the next text of them stays here. A new
// word's stems and parts (up to milliseconds for a long compound) and a new chunk's segmentation
// (about a microsecond a character) never run on the event loop.

type Terms = string[] | typeof NEEDS_FALLBACK;
/** Texts with their fallbacks; `learn`: send each text's words back (`learnWords`). */
export type AnalysisRequest = {
  texts: Array<[text: string, fallback: string | null | undefined]>;
  learn: boolean;
};
/** For each text its terms and words, or null where its analysis threw there. */
export type AnalysisAnswer = Array<[terms: Terms, words: LearnedWords] | null>;

/** Runs `analyze.ts` on the thread; null from it (the analysis threw) runs it here. */
class AnalyzerThread {
  private calls: WorkerCalls<AnalysisRequest, AnalysisAnswer | null> | null = null;
  private failed = false;

  /** Texts handed to the thread (tests). */
  asked = 0;

  async terms(text: string, fallback: string | null | undefined): Promise<Terms> {
    const [answer] = await this.many([[text, fallback]], true);
    if (answer instanceof Error) throw answer;
    return answer!;
  }

  /**
   * The terms of each text, in one message to the thread and one back. A text the thread could
   * not analyze (it threw, or the thread is gone) is analyzed here; where that throws too, its
   * error stands in its place.
   */
  async many(texts: AnalysisRequest['texts'], learn: boolean): Promise<Array<Terms | Error>> {
    this.asked += texts.length;
    const calls = this.start();
    const answer = calls?.running ? await calls.call({ texts, learn }) : null;
    return texts.map(([text, fallback], i) => {
      const one = answer?.[i];
      if (one) {
        learnWords(one[1]);
        return one[0];
      }
      try {
        return analyzeFor(text, fallback);
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    });
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

  private start(): WorkerCalls<AnalysisRequest, AnalysisAnswer | null> | null {
    if (this.calls || this.failed) return this.calls;
    try {
      const worker = startWorker(besideModule(import.meta.url, 'analyze-worker'));
      this.calls = new WorkerCalls<AnalysisRequest, AnalysisAnswer | null>(worker, () => null);
    } catch {
      this.failed = true;
    }
    return this.calls;
  }
}

const thread = new AnalyzerThread();

/** Texts up to this many UTF-16 units may be analyzed on the caller's thread. */
export const INLINE_CHARS = 160;

/**
 * `analyzeFor`: here for a short text whose words (and CJK chunks) were all analyzed lately,
 * else on the analysis thread.
 */
export function analyzeMessage(text: string, fallback?: string | null): Terms | Promise<Terms> {
  if (text.length <= INLINE_CHARS) {
    const terms = analyzeForFromRecent(text, fallback);
    if (terms !== null) return terms;
  }
  return thread.terms(text, fallback);
}

/**
 * `analyzeFor` of several texts on the analysis thread, in one hop there and back: the held
 * texts of SQLite's sends, analyzed after the sends (held-terms.ts). Their words are not sent
 * back, since these texts are not analyzed here. A text whose analysis threw has its error.
 */
export function analyzeBatch(texts: AnalysisRequest['texts']): Promise<Array<Terms | Error>> {
  return thread.many(texts, false);
}

/** `analyzeFor` on the analysis thread, whatever the text (tests). */
export function analyzeOffLoop(text: string, fallback?: string | null): Promise<Terms> {
  return thread.terms(text, fallback);
}

/** Whether the analysis thread is running (tests). */
export function analysisThreadRunning(): boolean {
  return thread.running;
}

/** How many texts were handed to the analysis thread (tests). */
export function analysisThreadAsked(): number {
  return thread.asked;
}

/** Ends the analysis thread, answering what waits here (tests). */
export function stopAnalysisThread(): Promise<void> {
  return thread.stop();
}
