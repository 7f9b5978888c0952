import { sql } from 'kysely';

import type { Agent, TestApp } from '../_util/app.js';
import { send } from '../conversations/_helpers.js';

// What the tests of how index rows are written read: a message's row, messages that have none,
// and FTS5's segments (SQLite).

/** A message's index terms as written, or null without a row. */
export async function termsOf(t: TestApp, id: string): Promise<string | null> {
  const row = await t.ctx.db.kysely
    .selectFrom('message_search')
    .select('terms')
    .where('messageId', '=', id)
    .executeTakeFirst();
  return row?.terms ?? null;
}

/** `n` messages without words (so without rows), for a test to give terms to itself. */
export async function bareMessages(t: TestApp, agent: Agent, conversationId: string, n: number) {
  const out: { id: string; createdAt: number }[] = [];
  for (let i = 0; i < n; i++) {
    const m = await send(t, agent, conversationId, '- - -');
    out.push({ id: m.id, createdAt: Date.parse(m.createdAt) });
  }
  return out;
}

/** How many segments FTS5's index holds (SQLite). */
export async function segments(t: TestApp): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(distinct segid) as n from message_search_fts_idx`.execute(t.ctx.db.kysely);
  return Number(rows[0]!.n);
}
