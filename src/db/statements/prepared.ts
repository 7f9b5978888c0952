import { createHash } from 'node:crypto';

import { CompiledQuery, PostgresAdapter, type Compilable, type QueryResult } from 'kysely';

import type { Executor } from '../types.js';

interface Template {
  sql: string;
  /** Per parameter of the compiled SQL: which argument fills it, or the constant it holds. */
  slots: Array<{ arg: number } | { value: unknown }>;
}

/**
 * A hot query built and compiled once per dialect instead of on every call. Building a Kysely
 * query costs more than SQLite takes to run a short one, and the queries of every request
 * (session, access, message insert) have a fixed shape. `build` is called once with a unique
 * placeholder for each argument; its compiled parameters are then mapped back to argument
 * positions. Only for queries whose shape does not depend on argument values (no `in` lists,
 * no branches on arguments).
 */
export function preparedQuery<A extends unknown[], R>(
  arity: number,
  build: (db: Executor, ...args: A) => Compilable<R>,
): PreparedQuery<A, R> {
  const templates = new Map<unknown, Template>();
  const statement = (db: Executor, ...args: A): CompiledQuery<R> => {
    const adapter = db.getExecutor().adapter.constructor;
    let template = templates.get(adapter);
    if (!template) {
      const placeholders = Array.from({ length: arity }, (_, i) => `\u0001svc:arg:${i}\u0001`);
      const compiled = build(db, ...(placeholders as A)).compile();
      if (db.getExecutor().adapter instanceof PostgresAdapter) nameStatement(compiled.sql);
      template = {
        sql: compiled.sql,
        slots: compiled.parameters.map((p) => {
          const i = placeholders.indexOf(p as string);
          return i >= 0 ? { arg: i } : { value: p };
        }),
      };
      templates.set(adapter, template);
    }
    const params = template.slots.map((s) => ('arg' in s ? args[s.arg] : s.value));
    return CompiledQuery.raw(template.sql, params) as CompiledQuery<R>;
  };
  const run = (db: Executor, ...args: A) => db.executeQuery<R>(statement(db, ...args));
  return Object.assign(run, { statement });
}

/** Runs the query (`q(db, ...args)`), or compiles it for `tx.defer` (`q.statement(db, ...args)`). */
export interface PreparedQuery<A extends unknown[], R> {
  (db: Executor, ...args: A): Promise<QueryResult<R>>;
  statement(db: Executor, ...args: A): CompiledQuery<R>;
}

/**
 * PostgreSQL: the SQL texts of the prepared queries and the name each runs under as a named
 * prepared statement (parsed and planned once per connection instead of on every call). The
 * name is a hash of the text, so a process running other code uses other names.
 */
export const namedStatements = new Map<string, string>();

/** Statements that take whatever columns a table has: their plan's shape could change. */
const STAR = /\bselect\s+\*|\.\*|\breturning\s+\*/i;

/** Composed texts kept by kind, then by the texts of their parts in order (one level each). */
interface Composition {
  next: Map<string, Composition>;
  text: string | undefined;
}

const compositions = new Map<string, Composition>();

/**
 * The statement `compose` puts together from the texts `parts`. When every part is named, its
 * text is the same whatever the arguments: it is named too (parsed and planned once per
 * connection) and kept under `kind` and its parts, so the next call with the same parts returns
 * it without composing it again, nor hashing a new long text at every lookup (a send's deferred
 * writes: about 65,000 instructions a send, round twelve). `kind` tells apart the ways of
 * composing the same parts. Otherwise `compose()` is called every time and nothing is kept.
 */
export function composedStatement(
  kind: string,
  parts: readonly string[],
  compose: () => string,
): string {
  let node = compositions.get(kind);
  for (let i = 0; node && i < parts.length; i += 1) node = node.next.get(parts[i]!);
  if (node?.text !== undefined) return node.text;
  const text = compose();
  if (!parts.every((p) => namedStatements.has(p))) return text;
  if (!namedStatements.has(text)) nameStatement(text);
  let at = compositions.get(kind);
  if (!at) {
    at = { next: new Map(), text: undefined };
    compositions.set(kind, at);
  }
  for (const part of parts) {
    let next: Composition | undefined = at.next.get(part);
    if (!next) {
      next = { next: new Map(), text: undefined };
      at.next.set(part, next);
    }
    at = next;
  }
  at.text = text;
  return text;
}

function nameStatement(sql: string): void {
  // A migration that adds a column changes what `*` means, and PostgreSQL then refuses to run a
  // statement it planned before ("cached plan must not change result type").
  if (STAR.test(sql)) throw new Error(`a prepared query must list its columns: ${sql}`);
  namedStatements.set(sql, `svc_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`);
}
