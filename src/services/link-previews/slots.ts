/**
 * Fetch slots: at most `size` holders at once; a waiter gives up after `waitMs`. First come,
 * first served.
 */
export class Slots {
  private used = 0;
  private readonly waiters: Array<(granted: boolean) => void> = [];

  constructor(
    private readonly size: number,
    private readonly waitMs: number,
  ) {}

  /** Resolves to a release function, or null when no slot freed up within `waitMs`. */
  acquire(): Promise<(() => void) | null> {
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const waiter = (granted: boolean) => {
        clearTimeout(timer);
        resolve(granted ? this.releaser() : null);
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i !== -1) this.waiters.splice(i, 1);
        resolve(null);
      }, this.waitMs);
      this.waiters.push(waiter);
    });
  }

  /** Holders now (metrics, tests). */
  get busy(): number {
    return this.used;
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter; `used` stays.
      if (next) next(true);
      else this.used--;
    };
  }
}
