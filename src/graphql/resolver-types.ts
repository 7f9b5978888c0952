import type { GraphQLResolveInfo } from 'graphql';

import type { GraphqlContext } from './context.js';

// Resolver shapes. Arguments are typed at each resolver from the SDL it implements.
export type Resolver<TParent = unknown, TArgs = Record<string, unknown>, TResult = unknown> = (
  parent: TParent,
  args: TArgs,
  context: GraphqlContext,
  info: GraphQLResolveInfo,
) => TResult | Promise<TResult>;

export interface SubscriptionResolver<TArgs = Record<string, unknown>> {
  subscribe: (
    parent: unknown,
    args: TArgs,
    context: GraphqlContext,
    info: GraphQLResolveInfo,
  ) => AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>;
  resolve?: Resolver;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type FieldResolvers = Record<string, Resolver<any, any, any> | SubscriptionResolver<any>>;

/** Type name -> field name -> resolver; scalars and enums take their own shapes. */
export type Resolvers = Record<string, FieldResolvers | Record<string, unknown>>;

/** Merges per-area resolver maps; two areas resolving the same field is a programming error. */
export function mergeResolvers(...maps: Resolvers[]): Resolvers {
  const out: Resolvers = {};
  for (const map of maps) {
    for (const [type, fields] of Object.entries(map)) {
      const target = (out[type] ??= {});
      for (const [name, r] of Object.entries(fields)) {
        if (name in target) throw new Error(`two resolvers for ${type}.${name}`);
        (target as Record<string, unknown>)[name] = r;
      }
    }
  }
  return out;
}
