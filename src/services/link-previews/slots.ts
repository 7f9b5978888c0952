/**
 * Fetch slots: at most `size` holders at once, and no new one while `open()` says no (holders
 * keep their slots; the waiters are looked at again every `recheckMs` and whenever a slot is
 * released). A waiter gives up after `waitMs`. First come, first served.
 */
export class Slots {
  private used = 0;
  private readonly waiters: Array<(granted: boolean) => void> = [];
  private recheck: NodeJS.Timeout | null = null;

  constructor(
    private readonly size: number,
    private readonly waitMs: number,
    private readonly open: () => boolean = () => true,
    private readonly recheckMs = 100,
  ) {}

  /** Resolves to a release function, or null when no slot freed up within `waitMs`. */
  acquire(): Promise<(() => void) | null> {
    if (this.waiters.length === 0 && this.used < this.allowed()) {
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
      this.grant();
    });
  }

  /** Holders now (metrics, tests). */
  get busy(): number {
    return this.used;
  }

  private allowed(): number {
    return this.open() ? this.size : 0;
  }

  /** Hands free slots to waiters, in order; rechecks later while `open()` holds them back. */
  private grant(): void {
    if (this.waiters.length === 0) return;
    const allowed = this.allowed();
    while (this.waiters.length > 0 && this.used < allowed) {
      this.used++;
      (this.waiters.shift() as (granted: boolean) => void)(true);
    }
    if (this.waiters.length > 0 && this.used < this.size && this.recheck === null) {
      this.recheck = setTimeout(() => {
        this.recheck = null;
        this.grant();
      }, this.recheckMs);
      this.recheck.unref();
    }
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.used--;
      this.grant();
    };
  }
}
