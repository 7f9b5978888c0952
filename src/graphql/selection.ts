import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

const answers = new WeakMap<FieldNode, Map<string, boolean>>();

/**
 * Whether the field being resolved selects `path` below it (field names, through inline
 * fragments and named ones), for a resolver that loads ahead what its children will ask for.
 * `@skip` and `@include` are not read: a field they leave out counts as selected, which costs a
 * load nobody reads, never a missing one. Kept per document node, as documents are cached.
 */
export function selects(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  const node = info.fieldNodes[0]!;
  const key = path.join('.');
  let known = answers.get(node);
  const hit = known?.get(key);
  if (hit !== undefined) return hit;
  const found = info.fieldNodes.some(
    (f) => f.selectionSet !== undefined && below(f.selectionSet, path, 0, info),
  );
  if (!known) {
    known = new Map();
    answers.set(node, known);
  }
  known.set(key, found);
  return found;
}

function below(
  set: SelectionSetNode,
  path: readonly string[],
  depth: number,
  info: GraphQLResolveInfo,
): boolean {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value !== path[depth]) continue;
      if (depth === path.length - 1) return true;
      if (selection.selectionSet && below(selection.selectionSet, path, depth + 1, info)) {
        return true;
      }
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (below(selection.selectionSet, path, depth, info)) return true;
    } else {
      const fragment = info.fragments[selection.name.value];
      if (fragment && below(fragment.selectionSet, path, depth, info)) return true;
    }
  }
  return false;
}
