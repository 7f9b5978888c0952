import {
  GraphQLError,
  specifiedRules,
  validate,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationTypeNode,
} from 'graphql';

import { validation } from '../errors.js';
import { selectOperation } from '../lib/graphql-operation.js';
import { Lru } from '../lib/lru.js';

import { CompiledOperations } from './compiled.js';
import type { GraphqlContext } from './context.js';
import { checkDocumentLimits, countMutationFields, parseBounded } from './document-limits.js';
import { codedError, formatError, plainError } from './format-error.js';
import { soleRootFieldArguments } from './root-field.js';

export interface GraphqlRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

export interface FormattedResult {
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
}

/** A document that parsed and validated, with what the transports need to know about it. */
export interface PreparedDocument {
  document: DocumentNode;
  /** Its operations, interpreted, then compiled once the document is used again (compiled.ts). */
  operations: CompiledOperations;
}

export interface ExecutorOptions {
  /** Runs of a document's operation before it is compiled (compiled.ts); default 2. */
  compileAfterRuns?: number;
}

type Prepared = { ok: true; doc: PreparedDocument } | { ok: false; errors: string[] };

// Documents above this size are not cached: real clients send short, repeated queries.
const CACHE_MAX_SOURCE = 20_000;

/**
 * Parses, bounds and validates GraphQL documents, caching the outcome by source text so a
 * repeated query costs a map lookup; runs them against the schema.
 */
export class GraphqlExecutor {
  private readonly cache = new Lru<string, Prepared>(1000);

  constructor(
    readonly schema: GraphQLSchema,
    private readonly opts: ExecutorOptions = {},
  ) {}

  /** Runs of a document before it is compiled, when told (the fan-out's events follow it). */
  get compileAfterRuns(): number | undefined {
    return this.opts.compileAfterRuns;
  }

  prepare(source: string): Prepared {
    const cached = this.cache.get(source);
    if (cached) return cached;
    const prepared = this.prepareUncached(source);
    if (source.length <= CACHE_MAX_SOURCE) this.cache.set(source, prepared);
    return prepared;
  }

  private prepareUncached(source: string): Prepared {
    const parsed = parseBounded(source);
    if ('error' in parsed) return { ok: false, errors: [parsed.error] };
    const limit = checkDocumentLimits(parsed.document);
    if (limit) return { ok: false, errors: [limit] };
    if (literalHasNul(parsed.document)) return { ok: false, errors: [NUL_MESSAGE] };
    const errors = validate(this.schema, parsed.document, specifiedRules, { maxErrors: 20 });
    if (errors.length > 0) return { ok: false, errors: errors.map((e) => e.message) };
    const document = parsed.document;
    return {
      ok: true,
      doc: {
        document,
        operations: new CompiledOperations(this.schema, document, {
          runsBeforeCompiling: this.opts.compileAfterRuns,
        }),
      },
    };
  }

  /** Which kind of operation a request selects, or null when it cannot be selected. */
  operationType(doc: PreparedDocument, operationName?: string | null): OperationTypeNode | null {
    return selectOperation(doc.document, operationName)?.operation ?? null;
  }

  /** The name of the operation a request selects (for metrics and logs), or null. */
  operationName(doc: PreparedDocument, operationName?: string | null): string | null {
    return selectOperation(doc.document, operationName)?.name?.value ?? null;
  }

  /** The arguments of a request's one root field, before execution (root-field.ts); or null. */
  rootFieldArguments(doc: PreparedDocument, request: GraphqlRequest) {
    return soleRootFieldArguments(
      doc.document,
      request.operationName ?? null,
      request.variables ?? null,
    );
  }

  mutationFieldCount(doc: PreparedDocument, operationName?: string | null): number {
    return countMutationFields(doc.document, operationName ?? null) ?? 0;
  }

  /** Runs one prepared request and formats its errors for the client. */
  async run(
    doc: PreparedDocument,
    request: GraphqlRequest,
    context: GraphqlContext,
  ): Promise<FormattedResult> {
    if (containsNul(request.variables)) {
      // PostgreSQL cannot store U+0000 in text and SQLite would; refusing it here keeps both
      // databases alike and no resolver ever sees it.
      return {
        errors: [codedError(validation(NUL_MESSAGE), context.requestId)],
      };
    }
    let result: ExecutionResult;
    try {
      result = await doc.operations.execute(
        request.operationName ?? undefined,
        request.variables ?? undefined,
        context,
      );
    } catch (err) {
      result = {
        errors: [
          err instanceof GraphQLError
            ? err
            : new GraphQLError('execution failed', { originalError: err as Error }),
        ],
      };
    }
    return this.format(result, context);
  }

  format(result: ExecutionResult, context: GraphqlContext): FormattedResult {
    const out: FormattedResult = {};
    if (result.errors?.length) {
      out.errors = result.errors.map((e) => formatError(e, context.requestId, context.log));
    }
    if ('data' in result)
      out.data = (result.data as Record<string, unknown> | null | undefined) ?? null;
    return out;
  }

  /** Errors of a document that did not prepare: GraphQL's own, so without a code. */
  static preparationErrors(errors: string[], requestId: string): FormattedResult {
    return { errors: errors.map((m) => plainError(m, requestId)) };
  }
}

const NUL_MESSAGE = 'text may not contain the NUL character (U+0000)';

/** Whether any string in a variables object contains U+0000 (depth-bounded, no recursion). */
export function containsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

function literalHasNul(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    StringValue(node) {
      if (node.value.includes('\u0000')) found = true;
    },
  });
  return found;
}
