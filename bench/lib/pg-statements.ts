import pg from 'pg';

import { PG_URL } from './svc.js';

/** One statement's share of a measured phase, per message of the phase. */
export interface StatementShare {
  calls_per_message: number;
  /** Execution and planning inside PostgreSQL, µs a message (not the protocol or the commit). */
  us_per_message: number;
  us_per_call: number;
  query: string;
}

/**
 * PostgreSQL's statements from now until the returned function is called, when the bench's
 * database has pg_stat_statements (bench/tools/pg-statements-cluster.sh starts one that has):
 * each statement's calls and its time inside PostgreSQL per message, costliest first. The
 * extension's counters are the whole server's, so the phase must run alone. Null on SQLite and
 * when the extension is not there (the machine's PostgreSQL as the tests use it). Each statement's
 * text is cut at BENCH_PG_STATEMENT_CHARS characters (160).
 */
export async function statementMeter(
  usePg: boolean,
): Promise<((messages: number) => Promise<StatementShare[]>) | null> {
  if (!usePg) return null;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select 1 from pg_extension where extname = 'pg_stat_statements'`,
    );
    if (rows.length === 0) return null;
    await client.query('select pg_stat_statements_reset()');
  } finally {
    await client.end();
  }
  return async (messages) => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      const { rows } = await c.query<{
        calls: string;
        ms: number;
        query: string;
      }>(`select calls, total_exec_time + total_plan_time as ms, query from pg_stat_statements
          where query not like '%pg_stat_statements%' order by ms desc limit 12`);
      const n = Math.max(messages, 1);
      return rows.map((r) => ({
        calls_per_message: Number((Number(r.calls) / n).toFixed(2)),
        us_per_message: Number(((r.ms * 1000) / n).toFixed(1)),
        us_per_call: Number(((r.ms * 1000) / Math.max(Number(r.calls), 1)).toFixed(1)),
        query: r.query
          .replace(/\s+/g, ' ')
          .slice(0, Number(process.env.BENCH_PG_STATEMENT_CHARS ?? 160)),
      }));
    } finally {
      await c.end();
    }
  };
}

/** The shares as note lines, after the phase's name. */
export function statementNotes(phase: string, shares: StatementShare[]): string[] {
  const total = shares.reduce((sum, s) => sum + s.us_per_message, 0);
  return [
    `${phase}: PostgreSQL's statements (pg_stat_statements), ${total.toFixed(0)} µs a message in the ${shares.length} costliest`,
    ...shares.map(
      (s) =>
        `  ${s.us_per_message.toFixed(1)} µs/msg  ${s.calls_per_message}×  ${s.us_per_call} µs/call  ${s.query}`,
    ),
  ];
}
