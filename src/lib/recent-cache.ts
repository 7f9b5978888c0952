/**
 * A bounded memo of recent lookups: two generations of at most `size` entries each. A key found
 * in the older generation moves to the newer; when the newer is full, the older is dropped and
 * the newer becomes the older. There is no reordering on a hit, which for a Map of thousands of
 * entries costs more than much of the work a cache saves (an LRU's move to the front).
 */
export class RecentCache<K, V> {
  private recent = new Map<K, V>();
  private older = new Map<K, V>();

  constructor(private readonly size: number) {}

  get(key: K): V | undefined {
    const hit = this.recent.get(key);
    if (hit !== undefined) return hit;
    const old = this.older.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: K, value: V): void {
    if (this.recent.size >= this.size) {
      this.older = this.recent;
      this.recent = new Map();
    }
    this.recent.set(key, value);
  }

  /** The value kept for `key`, or `make(key)` kept and returned. */
  through(key: K, make: (key: K) => V): V {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = make(key);
    this.set(key, value);
    return value;
  }
}
