import {
  GraphQLError,
  Kind,
  Lexer,
  OperationTypeNode,
  parse,
  Source,
  TokenKind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { selectOperation } from '../lib/graphql-operation.js';

/**
 * Bounds on one GraphQL document: far above what a client needs (GraphiQL's introspection query,
 * as large a document as a client sends, nests fields 15 deep and expands to 230 fields through
 * its fragments, with no aliases) while keeping the work an abusive document can cause in
 * parsing, validation and execution small.
 *
 * - `maxBytes`, `maxTokens`: parse work is linear in both (the introspection query: 2 KB, 183
 *   tokens).
 * - `maxNesting`: brackets `{ [ (` open at once in the source. graphql-js parses recursively and
 *   overflows the stack at a few thousand; 100 keeps it far away, above any real `maxDepth`.
 * - `maxDepth`: fields nested in fields, counted through fragments.
 * - `maxAliases`: aliases with fragments expanded; aliases are how one request repeats a costly
 *   field (or a mutation) many times.
 * - `maxFields`: fields with fragments expanded, a spread counted each time it appears — the
 *   document's share of execution cost, before list sizes multiply it.
 * - `maxFragmentExpansions`: fragment spreads and inline fragments, expanded the same way, so
 *   fragments that spread each other twice, level after level, are refused at once.
 * - `maxDirectivesPerSelection`: a field carries one `@skip` or `@include`, rarely both.
 * - `mutationFieldCountCap`: where `countMutationFields` stops. A document within `maxFields`
 *   never reaches it; it only keeps the number finite for one that is not checked.
 */
export const DOCUMENT_LIMITS = Object.freeze({
  maxBytes: 100_000,
  maxTokens: 10_000,
  maxNesting: 100,
  maxDepth: 20,
  maxAliases: 100,
  maxFields: 5_000,
  maxFragmentExpansions: 1_000,
  maxDirectivesPerSelection: 10,
  mutationFieldCountCap: 10_000,
});

/**
 * Checks the source text before it is parsed: size, token count and bracket nesting. Returns a
 * message for the client, or null. A lexical error is returned as graphql-js words it.
 */
export function checkDocumentSource(source: string): string | null {
  // UTF-8 is never shorter than UTF-16 code units, so the cheap test settles large bodies.
  if (
    source.length > DOCUMENT_LIMITS.maxBytes ||
    Buffer.byteLength(source) > DOCUMENT_LIMITS.maxBytes
  ) {
    return `document too large: more than ${DOCUMENT_LIMITS.maxBytes} bytes`;
  }
  // The lexer is iterative, so counting its tokens cannot overflow the stack the way the
  // recursive parser does on a deeply nested document.
  const lexer = new Lexer(new Source(source));
  let tokens = 0;
  let nesting = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      tokens += 1;
      if (tokens > DOCUMENT_LIMITS.maxTokens) {
        return `document too large: more than ${DOCUMENT_LIMITS.maxTokens} tokens`;
      }
      switch (token.kind) {
        case TokenKind.BRACE_L:
        case TokenKind.BRACKET_L:
        case TokenKind.PAREN_L:
          nesting += 1;
          if (nesting > DOCUMENT_LIMITS.maxNesting) {
            return `document nested too deeply: more than ${DOCUMENT_LIMITS.maxNesting} levels of brackets`;
          }
          break;
        case TokenKind.BRACE_R:
        case TokenKind.BRACKET_R:
        case TokenKind.PAREN_R:
          // An unbalanced closer is the parser's to report; only the depth matters here.
          nesting = Math.max(0, nesting - 1);
          break;
        default:
          break;
      }
    }
  } catch (error) {
    if (error instanceof GraphQLError) return error.message;
    throw error;
  }
  return null;
}

/** Parses a document within `DOCUMENT_LIMITS`; a refusal or syntax error comes back as text. */
export function parseBounded(source: string): { document: DocumentNode } | { error: string } {
  const problem = checkDocumentSource(source);
  if (problem !== null) return { error: problem };
  try {
    // The limit is checked above already; passing it again keeps parse bounded on its own.
    return { document: parse(source, { maxLexicalTokens: DOCUMENT_LIMITS.maxTokens }) };
  } catch (error) {
    if (error instanceof GraphQLError) return { error: error.message };
    // Unreachable within maxNesting, but a stack overflow must not escape as a crash.
    if (error instanceof RangeError) return { error: 'document nested too deeply' };
    throw error;
  }
}

/**
 * Checks a parsed document against `DOCUMENT_LIMITS`; returns a message for the client, or
 * null. With an operation name only that operation is checked (null when it cannot be
 * selected: execution reports that); without one every operation is, so a document checked
 * once holds whichever operation a request later selects.
 */
export function checkDocumentLimits(
  document: DocumentNode,
  operationName?: string | null,
): string | null {
  let operations: OperationDefinitionNode[];
  if (typeof operationName === 'string') {
    const selected = selectOperation(document, operationName);
    if (selected === null) return null;
    operations = [selected];
  } else {
    operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  }
  if (operations.length === 0) return null;
  const fragments = summarizeFragments(document);
  for (const operation of operations) {
    if (
      operation.directives &&
      operation.directives.length > DOCUMENT_LIMITS.maxDirectivesPerSelection
    ) {
      return directivesMessage;
    }
    const problem = limitProblem(summarize(operation.selectionSet, fragments));
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * The mutation fields a request runs, for the per-session mutation rate: each root field,
 * alias and fragment expansion counts once per appearance, `@skip`/`@include` whatever their
 * condition. 0 for a query or subscription, null when no operation can be selected, at most
 * `mutationFieldCountCap`.
 */
export function countMutationFields(
  document: DocumentNode,
  operationName?: string | null,
): number | null {
  const operation = selectOperation(document, operationName);
  if (operation === null) return null;
  if (operation.operation !== OperationTypeNode.MUTATION) return 0;
  const summary = summarize(operation.selectionSet, summarizeFragments(document));
  return Math.min(summary.rootFields, DOCUMENT_LIMITS.mutationFieldCountCap);
}

/**
 * The fields of the operation a request selects, with fragments expanded (saturating as
 * `summarize` does); null when no operation is selected.
 */
export function expandedFieldCount(
  document: DocumentNode,
  operationName?: string | null,
): number | null {
  const operation = selectOperation(document, operationName);
  if (operation === null) return null;
  return summarize(operation.selectionSet, summarizeFragments(document)).fields;
}

/**
 * What a selection set costs with fragments expanded. Counts saturate (see `add`) so a fragment
 * bomb yields a large number, not Infinity. `depth` is the deepest field, 1 for a root field.
 */
interface Summary {
  fields: number;
  aliases: number;
  expansions: number;
  depth: number;
  directives: number;
  // Fields at the root of the selection set itself, through fragments; `__typename` left out
  // because it runs nothing (the CSRF classifier treats it the same way).
  rootFields: number;
}

const SATURATED = 1e12;
const add = (a: number, b: number): number => Math.min(a + b, SATURATED);

const directivesMessage = `too many directives on one selection: more than ${DOCUMENT_LIMITS.maxDirectivesPerSelection}`;

function limitProblem(s: Summary): string | null {
  if (s.depth > DOCUMENT_LIMITS.maxDepth) {
    return `query too deep: more than ${DOCUMENT_LIMITS.maxDepth} levels of nested fields`;
  }
  if (s.aliases > DOCUMENT_LIMITS.maxAliases) {
    return `too many aliases: more than ${DOCUMENT_LIMITS.maxAliases}`;
  }
  if (s.fields > DOCUMENT_LIMITS.maxFields) {
    return `query too complex: more than ${DOCUMENT_LIMITS.maxFields} fields with fragments expanded`;
  }
  if (s.expansions > DOCUMENT_LIMITS.maxFragmentExpansions) {
    return `query too complex: more than ${DOCUMENT_LIMITS.maxFragmentExpansions} fragments with fragments expanded`;
  }
  if (s.directives > DOCUMENT_LIMITS.maxDirectivesPerSelection) return directivesMessage;
  return null;
}

/**
 * Summaries of every named fragment, each computed once from the summaries of the fragments it
 * spreads, so the work is linear in the document however often fragments are spread. The
 * fragment graph is walked with an explicit stack; a spread that closes a cycle counts as empty
 * (validation's NoFragmentCyclesRule refuses the document), as does an unknown fragment.
 */
function summarizeFragments(document: DocumentNode): Map<string, Summary> {
  const definitions = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    // Execution takes the last definition of a name; validation refuses duplicates anyway.
    if (d.kind === Kind.FRAGMENT_DEFINITION) definitions.set(d.name.value, d);
  }
  const done = new Map<string, Summary>();
  const open = new Set<string>();
  type Frame = { definition: FragmentDefinitionNode; spreads: string[]; next: number };
  const frame = (definition: FragmentDefinitionNode): Frame => {
    open.add(definition.name.value);
    return { definition, spreads: spreadNames(definition.selectionSet), next: 0 };
  };
  for (const start of definitions.values()) {
    if (done.has(start.name.value)) continue;
    const stack: Frame[] = [frame(start)];
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as Frame;
      const child = top.spreads[top.next];
      if (child !== undefined) {
        top.next += 1;
        const definition = definitions.get(child);
        if (definition && !done.has(child) && !open.has(child)) stack.push(frame(definition));
        continue;
      }
      stack.pop();
      const name = top.definition.name.value;
      open.delete(name);
      const summary = summarize(top.definition.selectionSet, done);
      const own = top.definition.directives?.length ?? 0;
      done.set(name, { ...summary, directives: Math.max(summary.directives, own) });
    }
  }
  return done;
}

/** Names of the fragments spread anywhere inside a selection set, nested fields included. */
function spreadNames(root: SelectionSetNode): string[] {
  const names: string[] = [];
  const pending: SelectionSetNode[] = [root];
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) names.push(selection.name.value);
      else if (selection.selectionSet) pending.push(selection.selectionSet);
    }
  }
  return names;
}

/** Summarizes one selection set, taking spread fragments' costs from `fragments`. */
function summarize(root: SelectionSetNode, fragments: Map<string, Summary>): Summary {
  const total: Summary = {
    fields: 0,
    aliases: 0,
    expansions: 0,
    depth: 0,
    directives: 0,
    rootFields: 0,
  };
  // `depth` of a pending set: how many fields enclose it within this selection set.
  const pending: { set: SelectionSetNode; depth: number }[] = [{ set: root, depth: 0 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { set, depth } = item;
    for (const selection of set.selections) {
      total.directives = Math.max(total.directives, selection.directives?.length ?? 0);
      switch (selection.kind) {
        case Kind.FIELD:
          total.fields = add(total.fields, 1);
          if (selection.alias) total.aliases = add(total.aliases, 1);
          if (depth === 0 && selection.name.value !== '__typename') {
            total.rootFields = add(total.rootFields, 1);
          }
          total.depth = Math.max(total.depth, depth + 1);
          if (selection.selectionSet)
            pending.push({ set: selection.selectionSet, depth: depth + 1 });
          break;
        case Kind.INLINE_FRAGMENT:
          total.expansions = add(total.expansions, 1);
          pending.push({ set: selection.selectionSet, depth });
          break;
        case Kind.FRAGMENT_SPREAD: {
          total.expansions = add(total.expansions, 1);
          const spread = fragments.get(selection.name.value);
          if (spread === undefined) break;
          total.fields = add(total.fields, spread.fields);
          total.aliases = add(total.aliases, spread.aliases);
          total.expansions = add(total.expansions, spread.expansions);
          total.depth = Math.max(total.depth, depth + spread.depth);
          total.directives = Math.max(total.directives, spread.directives);
          if (depth === 0) total.rootFields = add(total.rootFields, spread.rootFields);
          break;
        }
      }
    }
  }
  return total;
}
