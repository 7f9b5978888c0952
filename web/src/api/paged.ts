import { useEffect, useState } from 'preact/hooks';

import { gql } from './graphql.ts';

/**
 * A list field whose items carry their `cursor` (docs/api.md, Pagination), shown a page at a
 * time: the first page, then the next on `loadMore`. `query` takes `$after` and `$limit`;
 * `field` names the list in the answer, with dots for one inside an object
 * (`conversation.members`).
 */
export function usePagedList<T extends { cursor: string }>(
  query: string,
  field: string,
  variables: Record<string, unknown>,
  pageSize: number,
) {
  const [items, setItems] = useState<T[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const read = (after: string | null, before: T[]) =>
    gql<Record<string, unknown>>(query, { ...variables, after, limit: pageSize })
      .then((d) => {
        const page = listAt<T>(d, field);
        setItems([...before, ...page]);
        // A full page may have more behind it; an empty next page says there was none.
        setMore(page.length === pageSize);
      })
      .catch(setError);
  const reload = () => read(null, []);
  useEffect(() => {
    void reload();
  }, [query, JSON.stringify(variables)]);
  const loadMore = () => {
    const last = items?.[items.length - 1];
    if (last) void read(last.cursor, items ?? []);
  };
  return { items, more, loadMore, reload, error, setError };
}

/** Every item of a list field paged by its items' cursors, reading on from `first` (a page). */
export async function readRest<T extends { cursor: string }>(
  query: string,
  field: string,
  variables: Record<string, unknown>,
  first: T[],
  pageSize: number,
): Promise<T[]> {
  const all = [...first];
  let page = first;
  while (page.length === pageSize) {
    const after = page[page.length - 1]!.cursor;
    page =
      (await gql<Record<string, T[]>>(query, { ...variables, after, limit: pageSize }))[field] ??
      [];
    all.push(...page);
  }
  return all;
}

/** Every item of a list field paged by its items' cursors, a page of `pageSize` at a time. */
export async function readAll<T extends { cursor: string }>(
  query: string,
  field: string,
  variables: Record<string, unknown>,
  pageSize: number,
): Promise<T[]> {
  const first =
    (await gql<Record<string, T[]>>(query, { ...variables, after: null, limit: pageSize }))[
      field
    ] ?? [];
  return readRest(query, field, variables, first, pageSize);
}

/** The list at `path` (dot-separated) of an answer; empty when a step is missing or null. */
function listAt<T>(data: Record<string, unknown>, path: string): T[] {
  let at: unknown = data;
  for (const key of path.split('.')) {
    at = at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
  }
  return Array.isArray(at) ? (at as T[]) : [];
}
