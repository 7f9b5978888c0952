import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';

/**
 * The operation a GraphQL request selects, as graphql-js execution does, except that a name
 * given to two operations selects none (execution would take the last; validation refuses the
 * document), and a name that is not a string (it comes unchecked from JSON) selects none.
 *
 * The one selection shared by the CSRF classifier (src/auth/csrf.ts) and the document limits
 * and mutation count (src/graphql/document-limits.ts): both must judge the same operation, or a
 * request could pass one check on an operation and run another.
 */
export function selectOperation(
  document: DocumentNode,
  operationName: unknown,
): OperationDefinitionNode | null {
  if (operationName !== null && operationName !== undefined && typeof operationName !== 'string') {
    return null;
  }
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const candidates =
    operationName === null || operationName === undefined
      ? operations
      : operations.filter((op) => op.name?.value === operationName);
  return candidates.length === 1 ? (candidates[0] ?? null) : null;
}
