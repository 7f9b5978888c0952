import {
  Kind,
  OperationTypeNode,
  parse,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { selectOperation } from '../lib/graphql-operation.js';

/** The parts of one GraphQL request the classifier reads; both come unchecked from JSON. */
export type CsrfRequest = { query: unknown; operationName?: unknown };

// Mutations that start a session, end one, or are run by someone who has none yet (contract:
// CSRF token, rule 7). Forging them across sites gains an attacker nothing.
const EXEMPT = new Set([
  'login',
  'logout',
  'signupWithInvite',
  'requestPasswordReset',
  'resetPassword',
  'keyLoginChallenge',
  'loginWithKey',
  'signupWithKey',
  'sendDeviceLinkOffer',
  'applyRemoteRevocation',
]);

// Run from a device that is not signed in; with a session cookie they act for that session and
// need the token like any other mutation.
const EXEMPT_WITHOUT_SESSION = new Set(['rotateIdentityKey', 'cancelDeviceLink']);

// `__typename` selects no mutation and changes nothing, so it neither needs the token nor
// spoils the exemption of the fields beside it. Other meta-fields are refused at the mutation
// root by validation, and count as not exempt here.
const NEUTRAL = '__typename';

// Rule 5: deeper nesting of named fragments counts as unclassifiable.
const MAX_FRAGMENT_NESTING = 32;

// The same bounds as DOCUMENT_LIMITS (src/graphql/document-limits.ts), which this layer may not
// import. A document over them is refused there too, so failing it here changes no outcome.
const MAX_SOURCE_BYTES = 100_000;
const MAX_TOKENS = 10_000;

/**
 * Whether a GraphQL request must carry the CSRF header (contract: CSRF token, rules 4–8).
 * Anything the classifier cannot settle completely needs it.
 */
export function needsCsrf(req: CsrfRequest, hasSessionCookie: boolean): boolean {
  // A batch entry comes straight from JSON and may be anything.
  if (typeof req !== 'object' || req === null) return true;
  const document = parseBounded(req.query);
  if (document === null) return true;
  const operation = selectOperation(document, req.operationName);
  if (operation === null) return true;
  if (operation.operation !== OperationTypeNode.MUTATION) return false;
  const names = rootFieldNames(document, operation);
  if (names === null) return true;
  for (const name of names) {
    if (name === NEUTRAL || EXEMPT.has(name)) continue;
    if (!hasSessionCookie && EXEMPT_WITHOUT_SESSION.has(name)) continue;
    return true;
  }
  return false;
}

/** Whether any request of a batch needs the CSRF header; the check runs once for the batch. */
export function batchNeedsCsrf(reqs: CsrfRequest[], hasSessionCookie: boolean): boolean {
  return reqs.some((req) => needsCsrf(req, hasSessionCookie));
}

function parseBounded(query: unknown): DocumentNode | null {
  if (typeof query !== 'string') return null;
  if (query.length > MAX_SOURCE_BYTES || Buffer.byteLength(query) > MAX_SOURCE_BYTES) return null;
  try {
    return parse(query, { maxLexicalTokens: MAX_TOKENS, noLocation: true });
  } catch {
    // Syntax errors, the token limit, and RangeError from the recursive parser on a document
    // nested thousands deep: none of them can be classified.
    return null;
  }
}

/**
 * The names of an operation's root fields, through inline fragments and named fragments at any
 * depth, ignoring directives (rule 8). Null when a spread names no fragment, or one defined
 * twice, when fragments spread each other, or when they nest deeper than 32. Each fragment is
 * read once and the fragment graph is walked with an explicit stack, so the work stays linear
 * in the document whatever its shape.
 */
function rootFieldNames(
  document: DocumentNode,
  operation: OperationDefinitionNode,
): Set<string> | null {
  const definitions = new Map<string, FragmentDefinitionNode | null>();
  for (const d of document.definitions) {
    if (d.kind !== Kind.FRAGMENT_DEFINITION) continue;
    // null marks a name defined twice: which definition would run is not ours to guess.
    definitions.set(d.name.value, definitions.has(d.name.value) ? null : d);
  }

  const names = new Set<string>();
  // `height`: the deepest chain of named fragments below a finished fragment, itself included.
  const height = new Map<string, number>();
  const open = new Set<string>();
  type Frame = { name: string | null; spreads: string[]; next: number; height: number };
  const root: Frame = {
    name: null,
    spreads: readRoot(operation.selectionSet, names),
    next: 0,
    height: 0,
  };
  const stack: Frame[] = [root];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    const child = top.spreads[top.next];
    if (child !== undefined) {
      top.next += 1;
      if (open.has(child)) return null;
      const known = height.get(child);
      if (known !== undefined) {
        top.height = Math.max(top.height, known);
        continue;
      }
      const definition = definitions.get(child);
      // The stack holds the operation and the fragments above `child`, so its length is the
      // nesting level `child` would sit at.
      if (!definition || stack.length > MAX_FRAGMENT_NESTING) return null;
      open.add(child);
      stack.push({
        name: child,
        spreads: readRoot(definition.selectionSet, names),
        next: 0,
        height: 0,
      });
      continue;
    }
    stack.pop();
    if (top.name === null) break;
    open.delete(top.name);
    const own = top.height + 1;
    height.set(top.name, own);
    const parent = stack[stack.length - 1] as Frame;
    parent.height = Math.max(parent.height, own);
  }
  // A fragment met again along another path brings its height along without growing the
  // stack, so the deepest chain is known only once the operation's frame is done.
  return root.height > MAX_FRAGMENT_NESTING ? null : names;
}

/**
 * Adds the root-level field names of a selection set to `names`, looking through inline
 * fragments, and returns the fragments it spreads at root level.
 */
function readRoot(root: SelectionSetNode, names: Set<string>): string[] {
  const spreads: string[] = [];
  const pending: SelectionSetNode[] = [root];
  for (let set = pending.pop(); set !== undefined; set = pending.pop()) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) pending.push(selection.selectionSet);
      else spreads.push(selection.name.value);
    }
  }
  return spreads;
}
