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
 * has run `runsBeforeCompiling` times (2 unless told): graphql-js interprets the document at
 * every execution (for each field: its definition, its arguments, a resolve info, its completion
 * by type), which makes most of the GraphQL cost of a request (bench `instructions`). The
 * document was parsed and validated before (executor.ts), and is kept with its compiled
 * operations (an LRU of 1,000), so a client's repeated queries and mutations are compiled once;
 * a document used once is never compiled. An operation the compiler refuses runs on graphql-js.
 *
 * Requests (`events: false`) run queries and mutations compiled; a subscription stays with
 * graphql-js. For a subscription's events (`events: true`, the fan-out), the subscription runs
 * compiled with the event as its root value, as graphql-js runs it for each event.
 */
export class CompiledOperations {
  private readonly runs = new Map<string, number>();
  private readonly compiled = new Map<string, Compiled>();
  private readonly runsBeforeCompiling: number;
  private readonly events: boolean;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly document: DocumentNode,
    opts: { runsBeforeCompiling?: number; events?: boolean } = {},
  ) {
    this.runsBeforeCompiling = opts.runsBeforeCompiling ?? COMPILE_AFTER_RUNS;
    this.events = opts.events ?? false;
  }

  execute(
    operationName: string | undefined,
    variables: Record<string, unknown> | undefined,
    context: unknown,
    rootValue?: unknown,
  ): Promise<ExecutionResult> | ExecutionResult {
    const key = operationName ?? '';
    const compiled = this.compiled.get(key) ?? this.compileAfterRuns(key, operationName);
    if (compiled !== undefined && compiled !== 'interpret') {
      const result = compiled.query(rootValue, context, variables);
      // No `data`: the variables were refused before any field ran. graphql-js words those
      // errors a little differently; its own words are the ones clients have had.
      if (!(result instanceof Promise) && !('data' in result)) {
        return this.interpret(operationName, variables, context, rootValue);
      }
      return result;
    }
    return this.interpret(operationName, variables, context, rootValue);
  }

  private interpret(
    operationName: string | undefined,
    variables: Record<string, unknown> | undefined,
    context: unknown,
    rootValue: unknown,
  ): Promise<ExecutionResult> | ExecutionResult {
    return execute({
      schema: this.schema,
      document: this.document,
      rootValue,
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

  /** Operation names counted or compiled: at most the document's operations. */
  get tracked(): number {
    return new Set([...this.runs.keys(), ...this.compiled.keys()]).size;
  }

  private compileAfterRuns(key: string, operationName: string | undefined): Compiled | undefined {
    // A name the document lacks is graphql-js's to refuse, and is not counted: names a client
    // makes up must not grow what the cached document holds.
    if (!selectOperation(this.document, operationName)) return 'interpret';
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
    if (!operation || (operation.operation === 'subscription') !== this.events) {
      return 'interpret';
    }
    const fields = expandedFieldCount(this.document, operationName);
    if (fields === null || fields > MAX_COMPILED_FIELDS) return 'interpret';
    const result = compileQuery(this.schema, this.document, operationName, {
      disablingCapturingStackErrors: true,
    });
    return isCompiledQuery(result) ? result : 'interpret';
  }
}
