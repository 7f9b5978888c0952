import type { Clock } from '../lib/clock.js';

/** Something that ends at a point in time; the queue keeps `expiryIndex` for it. */
export interface Expiring {
  /** Milliseconds since the epoch, on the server's clock. */
  readonly expiresAt: number;
  /** Its place in the queue; -1 while not queued. */
  expiryIndex: number;
}

/** setTimeout's longest delay; a later expiry is reached in several steps. */
const MAX_DELAY_MS = 2_147_483_647;

/**
 * Items ordered by expiry (a binary min-heap) under one timer, armed for the earliest: each open
 * connection costs an array slot instead of a timer of its own. The timer counts real time, the
 * expiry is read from the clock when it fires, and an item not yet due waits again.
 */
export class ExpiryQueue<T extends Expiring> {
  private readonly heap: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.NaN;

  constructor(
    private readonly clock: Clock,
    private readonly expired: (item: T) => void,
  ) {}

  get size(): number {
    return this.heap.length;
  }

  /** Queues an item; one already due expires on a later turn of the event loop. */
  add(item: T): void {
    if (item.expiryIndex >= 0) return;
    item.expiryIndex = this.heap.length;
    this.heap.push(item);
    this.up(item.expiryIndex);
    this.arm();
  }

  remove(item: T): void {
    const i = item.expiryIndex;
    if (i < 0 || this.heap[i] !== item) return;
    item.expiryIndex = -1;
    const last = this.heap.pop()!;
    if (last !== item) {
      this.heap[i] = last;
      last.expiryIndex = i;
      this.down(i);
      this.up(last.expiryIndex);
    }
    this.arm();
  }

  /** Stops the timer; queued items stay queued and expire no more. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.NaN;
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.armedFor = Number.NaN;
    const now = this.clock.now().getTime();
    while (this.heap.length > 0 && this.heap[0]!.expiresAt <= now) {
      const item = this.heap[0]!;
      this.remove(item);
      this.expired(item);
    }
    this.arm();
  };

  private arm(): void {
    const first = this.heap[0];
    if (!first) {
      this.close();
      return;
    }
    if (this.timer && this.armedFor === first.expiresAt) return;
    clearTimeout(this.timer);
    const left = first.expiresAt - this.clock.now().getTime();
    this.timer = setTimeout(this.fire, Math.min(Math.max(left, 0), MAX_DELAY_MS));
    this.timer.unref();
    this.armedFor = first.expiresAt;
  }

  private up(i: number): void {
    const { heap } = this;
    const item = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.expiresAt <= item.expiresAt) break;
      heap[i] = heap[parent]!;
      heap[i]!.expiryIndex = i;
      i = parent;
    }
    heap[i] = item;
    item.expiryIndex = i;
  }

  private down(i: number): void {
    const { heap } = this;
    const item = heap[i]!;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]!.expiresAt < heap[child]!.expiresAt) {
        child += 1;
      }
      if (heap[child]!.expiresAt >= item.expiresAt) break;
      heap[i] = heap[child]!;
      heap[i]!.expiryIndex = i;
      i = child;
    }
    heap[i] = item;
    item.expiryIndex = i;
  }
}
