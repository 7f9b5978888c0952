import { Kind, type DocumentNode, type ValueNode } from 'graphql';

import { selectOperation } from '../lib/graphql-operation.js';

/**
 * The arguments of the one root field of a request's query or mutation, as plain values (string
 * literals, objects of them, and variables as the request gave them); null when the operation
 * has any other shape (several root fields, a fragment at the root, a subscription). Read before
 * execution to fetch what the field will ask for first; execution still checks and coerces
 * every argument itself.
 */
export function soleRootFieldArguments(
  document: DocumentNode,
  operationName: string | null,
  variables: Record<string, unknown> | null,
): Record<string, unknown> | null {
  const op = selectOperation(document, operationName);
  if (!op || op.operation === 'subscription') return null;
  const selections = op.selectionSet.selections;
  const only = selections[0];
  if (selections.length !== 1 || only?.kind !== Kind.FIELD) return null;
  const args: Record<string, unknown> = {};
  for (const arg of only.arguments ?? []) args[arg.name.value] = plainValue(arg.value, variables);
  return args;
}

function plainValue(node: ValueNode, variables: Record<string, unknown> | null): unknown {
  switch (node.kind) {
    case Kind.VARIABLE:
      return variables && Object.hasOwn(variables, node.name.value)
        ? variables[node.name.value]
        : undefined;
    case Kind.STRING:
      return node.value;
    case Kind.OBJECT:
      return Object.fromEntries(
        node.fields.map((f) => [f.name.value, plainValue(f.value, variables)]),
      );
    default:
      return undefined;
  }
}
