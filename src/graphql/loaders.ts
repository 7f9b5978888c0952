import type { GraphQLResolveInfo } from 'graphql';

import type { GraphqlContext } from './context.js';

// Per-request batching for the fields of a page (no N+1): every key asked for while graphql-js
// resolves one level of a list is loaded in one query. Loaders are kept per request (on the
// GraphqlContext) and per root field, so a mutation later in the same request never reads what
// an earlier one cached. Each area declares its own loaders (resolvers/<area>/loaders.ts).

export type BatchFn<V> = (keys: string[]) => Promise<Map<string, V>>;

/** One batched, cached lookup by string key (DataLoader's idea, in 40 lines). */
export class Loader<V> {
  private readonly cache = new Map<string, Promise<V | undefined>>();
  /** What the settled batches answered, by key (undefined: asked and not found). */
  private readonly settled = new Map<string, V | undefined>();
  private queue: Array<{
    key: string;
    resolve: (v: V | undefined) => void;
    reject: (e: unknown) => void;
  }> = [];

  constructor(private readonly batch: BatchFn<V>) {}

  load(key: string): Promise<V | undefined> {
    const hit = this.cache.get(key);
    if (hit) return hit;
    const p = new Promise<V | undefined>((resolve, reject) => {
      if (this.queue.length === 0) {
        // After the promises graphql-js is resolving now have settled, like DataLoader.
        void Promise.resolve().then(() => process.nextTick(() => this.dispatch()));
      }
      this.queue.push({ key, resolve, reject });
    });
    this.cache.set(key, p);
    return p;
  }

  /**
   * Whether `key`'s batch has answered, so `value(key)` may be returned at once. A resolver that
   * answers a known value instead of a promise lets graphql-js complete its object without a
   * promise of its own (for a page of 30 messages, 30 fewer).
   */
  known(key: string): boolean {
    return this.settled.has(key);
  }

  /** The answer for `key` once `known(key)`; undefined when it was not found. */
  value(key: string): V | undefined {
    return this.settled.get(key);
  }

  /** Loads `keys` in one batch; resolves once every one is `known`. */
  prime(keys: readonly string[]): Promise<unknown> {
    return Promise.all(keys.map((k) => this.load(k)));
  }

  private dispatch() {
    const queue = this.queue;
    this.queue = [];
    const keys = [...new Set(queue.map((q) => q.key))];
    this.batch(keys).then(
      (map) => {
        for (const key of keys) this.settled.set(key, map.get(key));
        queue.forEach((q) => q.resolve(map.get(q.key)));
      },
      (err) => queue.forEach((q) => q.reject(err)),
    );
  }
}

/** The loaders of one request, by root field and name; it lives on the GraphqlContext. */
export type RequestLoaders = Map<string, Loader<unknown>>;

function rootKey(info: GraphQLResolveInfo): string {
  let path = info.path;
  while (path.prev) path = path.prev;
  return String(path.key);
}

/** The request's loader `name` under the current root field, created on first use. */
export function loader<V>(
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  name: string,
  batch: BatchFn<V>,
): Loader<V> {
  const loaders = (ctx.loaders ??= new Map());
  const key = `${rootKey(info)}\u0000${name}`;
  let l = loaders.get(key) as Loader<V> | undefined;
  if (!l) {
    l = new Loader(batch);
    loaders.set(key, l as unknown as Loader<unknown>);
  }
  return l;
}

/** Rows grouped by a key column, for batch functions that answer lists. */
export const group = <T, K extends keyof T>(rows: T[], key: K) => {
  const out = new Map<string, T[]>();
  for (const r of rows) {
    const k = String(r[key]);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
};
