import { execute, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

import { selectOperation } from '../lib/graphql-operation.js';

import { expandedFieldCount } from './document-limits.js';

/** Runs of a document under one operation name before it is compiled, by default. */
const COMPILE_AFTER_RUNS = 2;

/**
 * Larger operations stay interpreted. Compiling costs several times what parsing and
 * validating cost, more the larger the operation (5,000 fields with fragments expanded, the most
 * a document may have: 290 ms against 24 ms; 165 fields: 12 ms against 4 ms), so a client
 * sending large documents twice would make the server compile at that rate. A page of messages
 * with every field is 33 fields.
 */
export const MAX_COMPILED_FIELDS = 200;

type Compiled = CompiledQuery | 'interpret';

/**
 * A document's operations run as JavaScript compiled for them (graphql-jit) once the document
 * has run `compileAfterRuns` times (2 unless told): graphql-js interprets the document at every execution (for
 * each field: its definition, its arguments, a resolve info, its completion by type), which
 * makes most of the GraphQL cost of a request (bench `instructions`). The document was parsed
 * and validated before (executor.ts), and is kept with its compiled operations (an LRU of 1,000),
 * so a client's repeated queries and mutations are compiled once; a document used once is never
 * compiled. Subscriptions, and an operation the compiler refuses, run on graphql-js.
 */
export class CompiledOperations {
  private readonly runs = new Map<string, number>();
  private readonly compiled = new Map<string, Compiled>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly document: DocumentNode,
    private readonly runsBeforeCompiling = COMPILE_AFTER_RUNS,
  ) {}

  execute(
    operationName: string | undefined,
    variables: Record<string, unknown> | undefined,
    context: unknown,
  ): Promise<ExecutionResult> | ExecutionResult {
    const key = operationName ?? '';
    const compiled = this.compiled.get(key) ?? this.compileAfterRuns(key, operationName);
    if (compiled !== undefined && compiled !== 'interpret') {
      const result = compiled.query(undefined, context, variables);
      // No `data`: the variables were refused before any field ran. graphql-js words those
      // errors a little differently; its own words are the ones clients have had.
      if (!(result instanceof Promise) && !('data' in result))
        return this.interpret(operationName, variables, context);
      return result;
    }
    return this.interpret(operationName, variables, context);
  }

  private interpret(
    operationName: string | undefined,
    variables: Record<string, unknown> | undefined,
    context: unknown,
  ): Promise<ExecutionResult> | ExecutionResult {
    return execute({
      schema: this.schema,
      document: this.document,
      variableValues: variables,
      operationName,
      contextValue: context,
    });
  }

  /** Whether the operation `operationName` now runs compiled. */
  isCompiled(operationName?: string): boolean {
    const compiled = this.compiled.get(operationName ?? '');
    return compiled !== undefined && compiled !== 'interpret';
  }

  private compileAfterRuns(key: string, operationName: string | undefined): Compiled | undefined {
    const runs = (this.runs.get(key) ?? 0) + 1;
    this.runs.set(key, runs);
    if (runs < this.runsBeforeCompiling) return undefined;
    this.runs.delete(key);
    const compiled = this.compile(operationName);
    this.compiled.set(key, compiled);
    return compiled;
  }

  private compile(operationName: string | undefined): Compiled {
    const operation = selectOperation(this.document, operationName);
    if (!operation || operation.operation === 'subscription') return 'interpret';
    const fields = expandedFieldCount(this.document, operationName);
    if (fields === null || fields > MAX_COMPILED_FIELDS) return 'interpret';
    const result = compileQuery(this.schema, this.document, operationName, {
      disablingCapturingStackErrors: true,
    });
    return isCompiledQuery(result) ? result : 'interpret';
  }
}
