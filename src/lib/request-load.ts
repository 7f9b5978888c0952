import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** The span over which requests and the event loop's work are judged. */
export const LOAD_WINDOW_MS = 100;

/** A request served for longer than this no longer holds background work back (`between`). */
export const LONG_REQUEST_MS = 1000;

/**
 * How much of the process requests are using, for background work that gives way to them (link
 * previews: docs/link-previews.md); `sustained()` tells the WebSocket writes when to gather
 * (ws/write-batcher.ts). `share()` is the event loop's utilization (the share of time
 * it spent running code rather than waiting) over the last whole window, or over the window
 * under way once it is a tenth through, whichever is higher: a burst of requests is seen within
 * milliseconds, and the load counts as gone only after a whole quieter window. It is 0 when no
 * request (an HTTP request or a WebSocket message) arrived within the last window, so background
 * work that keeps the loop busy on its own never holds itself back. Nothing runs on a timer: the
 * windows are closed by the requests themselves (and by `share()`), so while requests come in
 * each window is one `windowMs` long.
 */
export class RequestLoad {
  private lastArrival = -Infinity;
  private mark: EventLoopUtilization = performance.eventLoopUtilization();
  private markedAt = performance.now();
  private last = 0;
  /** HTTP requests being served, from the onRequest hook to their response or abort, and when. */
  private readonly serving = new Map<object, number>();
  private waiters: Array<() => void> = [];

  constructor(
    private readonly windowMs = LOAD_WINDOW_MS,
    private readonly longRequestMs = LONG_REQUEST_MS,
  ) {}

  /** A request arrived (the HTTP onRequest hook, each WebSocket message). */
  arrived(): void {
    const now = performance.now();
    this.lastArrival = now;
    if (now - this.markedAt >= this.windowMs) this.close(now);
  }

  /** An HTTP request is being served (with `arrived`); `answered` with the same object ends it. */
  started(request: object): void {
    this.arrived();
    this.serving.set(request, this.lastArrival);
  }

  /** A request `started` was answered or abandoned; a second call for it changes nothing. */
  answered(request: object): void {
    if (!this.serving.delete(request) || this.waiters.length === 0 || this.busy()) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const wake of waiting) wake();
  }

  /**
   * Whether a request is being served that started within the last `longRequestMs`: a longer one
   * (a large download on a slow link) is waiting on the network, not keeping the process busy,
   * and is forgotten (so one whose end was never reported cannot stay for good).
   */
  private busy(): boolean {
    const since = performance.now() - this.longRequestMs;
    let fresh = false;
    for (const [request, at] of this.serving) {
      if (at > since) fresh = true;
      else this.serving.delete(request);
    }
    return fresh;
  }

  /** Whether a request arrived within the last window. */
  recent(): boolean {
    return performance.now() - this.lastArrival <= this.windowMs;
  }

  /**
   * Resolves once no HTTP request is being served, or after `maxMs` at most: background work
   * that runs in steps (the notification fan-out) starts each step between requests, so a
   * request never waits for a step that began while it was being served, and under a load that
   * never pauses the work still goes on, a step every `maxMs`.
   */
  between(maxMs: number): Promise<void> {
    if (!this.busy()) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve();
      }, maxMs);
      this.waiters.push(wake);
    });
  }

  /** The share (0 to 1) of the event loop that requests kept busy lately. */
  share(): number {
    const now = performance.now();
    if (now - this.markedAt >= this.windowMs) this.close(now);
    if (now - this.lastArrival > this.windowMs) return 0;
    if (now - this.markedAt < this.windowMs / 10) return this.last;
    const running = performance.eventLoopUtilization(
      performance.eventLoopUtilization(),
      this.mark,
    ).utilization;
    return Math.max(this.last, running);
  }

  /**
   * The event loop's utilization (0 to 1) over the last whole window, whatever kept it busy: a
   * load that lasted at least `windowMs`, never a burst of a few milliseconds, and without
   * `share`'s rule that no request means no load (the fan-out of events that other processes
   * published is work too). After a quiet spell the window spans it, so the figure is low.
   */
  sustained(): number {
    const now = performance.now();
    if (now - this.markedAt >= this.windowMs) this.close(now);
    return this.last;
  }

  /** Ends the window under way. */
  private close(now: number): void {
    const current = performance.eventLoopUtilization();
    this.last = performance.eventLoopUtilization(current, this.mark).utilization;
    this.mark = current;
    this.markedAt = now;
  }
}
