import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/**
 * How late the event loop runs what is due: a timer due every `resolutionMs`, and the time by
 * which each firing came later than that. Node's histogram records the time between firings,
 * which includes the interval itself (an idle loop sampled every 10 ms reports 10 ms); this
 * reports only what is beyond it, so an idle loop reads about 0 and a loop blocked for 50 ms
 * reads about 50 ms.
 */
export class LoopDelay {
  private readonly histogram: IntervalHistogram;

  constructor(private readonly resolutionMs = 10) {
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    this.histogram.enable();
  }

  /** The `p`th percentile of the delay since the last call, in seconds; then starts over. */
  take(p: number): number {
    const h = this.histogram;
    const ms = h.count === 0 ? 0 : Math.max(0, h.percentile(p) / 1e6 - this.resolutionMs);
    h.reset();
    return ms / 1000;
  }

  close(): void {
    this.histogram.disable();
  }
}
