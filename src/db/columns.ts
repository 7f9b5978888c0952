/**
 * Every column of a table, listed, for the prepared statements (src/db/prepared.ts), which never
 * take `*`: a column added by a later migration must not change the shape of a plan a running
 * process holds. `everyColumn<T>()([...])` fails to compile when `T` has a column the list lacks,
 * naming it; `prefix` gives the list as `alias.column` for a query that joins.
 */
export function everyColumn<T>() {
  return <const L extends ReadonlyArray<keyof T & string>>(
    list: L &
      (Exclude<keyof T, L[number]> extends never
        ? unknown
        : { missing: Exclude<keyof T, L[number]> }),
  ): L => list;
}

/** `columns` as `alias.column`. */
export function prefixed<const A extends string, const C extends string>(
  alias: A,
  columns: readonly C[],
): Array<`${A}.${C}`> {
  return columns.map((c) => `${alias}.${c}` as const);
}
