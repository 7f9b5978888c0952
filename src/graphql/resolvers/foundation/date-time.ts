import { GraphQLError, Kind, type ValueNode } from 'graphql';

import { isoTime } from '../../../lib/iso-time.js';

/** DateTime: stored as milliseconds, sent as RFC 3339 UTC. */
export const DateTime = {
  serialize(value: unknown): string {
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'number' && Number.isFinite(value)) return isoTime(value);
    if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) {
      return new Date(value).toISOString();
    }
    throw new GraphQLError('DateTime cannot represent this value');
  },
  parseValue(value: unknown): Date {
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) {
      throw new GraphQLError('DateTime must be an RFC 3339 string');
    }
    return new Date(value);
  },
  parseLiteral(ast: ValueNode): Date {
    if (ast.kind !== Kind.STRING || Number.isNaN(Date.parse(ast.value))) {
      throw new GraphQLError('DateTime must be an RFC 3339 string');
    }
    return new Date(ast.value);
  },
};
