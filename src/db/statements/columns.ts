/**
 * Every column of a table, listed, for the prepared statements (src/db/statements/prepared.ts), which never
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

/**
 * `(row) => ({ "a": row[from a], "b": row[from b] })` for a fixed list of fields, compiled once:
 * one object literal, so every object it makes has the same hidden class from the start (no
 * property added one at a time, no key built per call), and the code reading those objects sees
 * one shape. `from` is a key of the row, or an index for a row that is an array. The names must be
 * distinct and not `__proto__`, which a literal would treat otherwise.
 */
export function objectMaker<R = Record<string, unknown>>(
  fields: ReadonlyArray<readonly [name: string, from: string | number]>,
): (row: unknown) => R {
  const names = fields.map(([name]) => name);
  if (!copiesAsLiteral(names)) {
    throw new Error(`objectMaker: names must be distinct and not __proto__: ${names.join(', ')}`);
  }
  // Names and keys are quoted as JSON string literals (indexes are numbers): no code of their own.
  const body = fields
    .map(([name, from]) => `${JSON.stringify(name)}: r[${JSON.stringify(from)}]`)
    .join(', ');
  return new Function('r', `return { ${body} };`) as (row: unknown) => R;
}

/** Whether an object literal keeps these names as they are: distinct, and none `__proto__`. */
export function copiesAsLiteral(names: readonly string[]): boolean {
  return new Set(names).size === names.length && !names.includes('__proto__');
}
