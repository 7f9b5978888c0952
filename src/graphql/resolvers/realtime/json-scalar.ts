import { valueFromASTUntyped, type ValueNode } from 'graphql';

/** JSON: any JSON value, sent as it is. */
export const JSONScalar = {
  serialize: (value: unknown): unknown => value,
  parseValue: (value: unknown): unknown => value,
  parseLiteral: (ast: ValueNode, variables?: Record<string, unknown> | null): unknown =>
    valueFromASTUntyped(ast, variables ?? undefined),
};
