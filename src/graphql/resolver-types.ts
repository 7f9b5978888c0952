import type { ResolverFn, Resolvers } from './generated/resolver-types.js';

// The resolver maps are typed by the types generated from the SDL (generated/resolver-types.ts,
// `npm run codegen`): a resolver whose parent, arguments or result disagree with the SDL fails
// the typecheck.
export type { Resolvers };

/** A resolver's shape, for helpers shared by several fields. */
export type Resolver<
  TParent = unknown,
  TArgs = Record<string, unknown>,
  TResult = unknown,
> = ResolverFn<TParent, TArgs, TResult>;

/** A resolver map for fields beyond the contract's SDL (tests that extend the schema). */
export type LooseResolvers = Record<string, Record<string, unknown>>;

/** Merges per-area resolver maps; two areas resolving the same field is a programming error. */
export function mergeResolvers(...maps: Array<Resolvers | LooseResolvers>): Resolvers {
  const out: Record<string, Record<string, unknown>> = {};
  for (const map of maps) {
    for (const [type, fields] of Object.entries(map as LooseResolvers)) {
      const target = (out[type] ??= {});
      for (const [name, r] of Object.entries(fields)) {
        if (name in target) throw new Error(`two resolvers for ${type}.${name}`);
        target[name] = r;
      }
    }
  }
  return out as Resolvers;
}

/**
 * An internal value's enum name (`thread_reply` -> `THREAD_REPLY`), typed: a value the SDL's
 * enum lacks fails the typecheck.
 */
export const enumName = <T extends string>(value: T): Uppercase<T> =>
  value.toUpperCase() as Uppercase<T>;
