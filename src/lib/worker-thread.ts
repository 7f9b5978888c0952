import { Worker } from 'node:worker_threads';

/**
 * A worker thread running the module `entry` (a file URL): a built `.js` as it is; a TypeScript
 * source (the tests, `tsx`) through tsx's loader, which the worker registers first, since
 * loader flags do not reach a worker's entry on Node 20.
 */
export function startWorker(entry: URL): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry);
  return new Worker(
    `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(entry.href)}); });`,
    { eval: true },
  );
}

/** The file beside the module at `base` (its `import.meta.url`) named `name`, as that one is. */
export function besideModule(base: string, name: string): URL {
  return new URL(`./${name}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base);
}

/**
 * Calls answered by a worker thread, matched by id: the thread gets `[id, request]` and posts
 * back `[id, answer]`, one answer a call, in any order. The thread holds the process open only
 * while an answer is awaited. Once it ends (`end`, an exit, an error), every call still waiting
 * and every later one is settled by `lost`, which answers it on this thread or throws.
 */
export class WorkerCalls<Request, Answer> {
  private next = 1;
  private readonly waiting = new Map<
    number,
    { request: Request; resolve: (answer: Answer) => void; reject: (err: unknown) => void }
  >();
  private ended: unknown = null;

  constructor(
    private readonly worker: Worker,
    private readonly lost: (request: Request, cause: unknown) => Answer,
  ) {
    worker.unref();
    worker.on('message', ([id, answer]: [number, Answer]) => {
      const waiting = this.waiting.get(id);
      if (!waiting) return;
      this.waiting.delete(id);
      if (this.waiting.size === 0) worker.unref();
      waiting.resolve(answer);
    });
    worker.on('error', (err) => this.stop(err));
    worker.on('exit', (code) => this.stop(new Error(`the worker thread stopped (exit ${code})`)));
  }

  /** Whether the thread still answers. */
  get running(): boolean {
    return this.ended === null;
  }

  call(request: Request): Promise<Answer> {
    const answer = this.ended !== null ? this.settle(request, this.ended) : this.post(request);
    // A caller may await the answer later (an import writes its batch meanwhile): a failure
    // before then is its to see, not an unhandled rejection of the process.
    answer.catch(() => {});
    return answer;
  }

  private post(request: Request): Promise<Answer> {
    const id = this.next++;
    if (this.waiting.size === 0) this.worker.ref();
    return new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, { request, resolve, reject });
      this.worker.postMessage([id, request]);
    });
  }

  /** Ends the thread; what was waiting is settled by `lost`. */
  async end(): Promise<void> {
    this.stop(new Error('the worker thread was ended'));
    await this.worker.terminate();
  }

  private stop(cause: unknown): void {
    if (this.ended !== null) return;
    this.ended = cause;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) this.settle(w.request, cause).then(w.resolve, w.reject);
  }

  private settle(request: Request, cause: unknown): Promise<Answer> {
    try {
      return Promise.resolve(this.lost(request, cause));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
