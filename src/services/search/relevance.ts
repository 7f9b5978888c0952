import type { MessageTable } from '../../db/tables/messages.js';
import { validation } from '../../errors.js';

import type { ParsedQuery } from './query-grammar.js';
import { tokenize } from './tokenize.js';

// Ordering by relevance (docs/search.md, "Order"). Every message found holds every query term
// (search is AND), so relevance says how much a message is about them: BM25 over the message's
// own terms (how often each query term occurs, against the message's length), plus a bonus when
// the query's terms stand side by side in the query's order ("deploy failed" before "failed to
// deploy"). It is computed in the server from the text, so SQLite and PostgreSQL order alike.
// Ranked are the newest `RELEVANCE_CANDIDATES` matches (what a person scrolls back through);
// ties go to the newer message.

/** How many of the newest matches are ranked. */
export const RELEVANCE_CANDIDATES = 500;

const K1 = 1.2;
const B = 0.75;
const PHRASE_BONUS = 1.5;

/**
 * Weight of a query word matched other than exactly (a stem, a compound part, a prefix), as a
 * term frequency: below one exact occurrence, so exact matches rank first.
 */
const INEXACT_TF = 0.5;

/** `messages` most relevant first for the parsed query. */
export function rankByRelevance(messages: MessageTable[], parsed: ParsedQuery): MessageTable[] {
  const queryTokens = parsed.words;
  const distinct = [...new Set(queryTokens)];
  const tokens = messages.map((m) => tokenize(m.text ?? ''));
  const avgLength = tokens.reduce((n, t) => n + t.length, 0) / Math.max(1, tokens.length) || 1;
  const scored = messages.map((message, i) => {
    const own = tokens[i]!;
    const counts = new Map<string, number>();
    for (const t of own) counts.set(t, (counts.get(t) ?? 0) + 1);
    let score = 0;
    for (const term of distinct) {
      // Every result matched every word somehow: exactly, or through its stems.
      const tf = counts.get(term) ?? INEXACT_TF;
      score += (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * own.length) / avgLength));
    }
    if (queryTokens.length > 1 && containsRun(own, queryTokens)) score += PHRASE_BONUS;
    return { message, score };
  });
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      Number(b.message.createdAt) - Number(a.message.createdAt) ||
      (a.message.id < b.message.id ? 1 : -1),
  );
  return scored.map((s) => s.message);
}

function containsRun(tokens: readonly string[], run: readonly string[]): boolean {
  outer: for (let i = 0; i + run.length <= tokens.length; i++) {
    for (let j = 0; j < run.length; j++) if (tokens[i + j] !== run[j]) continue outer;
    return true;
  }
  return false;
}

/**
 * A relevance cursor: the time bound of the ranked set (matches sent at or before it, so a
 * message sent meanwhile never enters it) and how many ranked results were already given.
 */
export interface RelevanceCursor {
  through: number;
  offset: number;
}

export function encodeRelevanceCursor(c: RelevanceCursor): string {
  return Buffer.from(`relevance:${c.through}:${c.offset}`, 'utf8').toString('base64url');
}

/** Decodes a relevance cursor; anything else (a newest-first cursor too) answers VALIDATION. */
export function decodeRelevanceCursor(cursor: string): RelevanceCursor {
  const text = /^[A-Za-z0-9_-]{1,100}$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  const m = /^relevance:(\d{1,16}):(\d{1,6})$/.exec(text);
  if (!m) throw validation('cursor is not one this server issued for order RELEVANCE');
  return { through: Number(m[1]), offset: Number(m[2]) };
}
