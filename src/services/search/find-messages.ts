import type { Db, Dialect } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { KeysetFrom } from '../paging/index.js';

import {
  countMatches,
  estimateMatches,
  indexOrderRows,
  searchableConversations,
  searchMessageRows,
  termsMatcher,
  usesIndex,
  type IndexMatch,
  type MessageSearchFilters,
} from './match-queries.js';
import { messagesByIds, messagesWithTerms, timeWalkStep } from './walk-queries.js';

// Two ways to find a page of matches newest first, which give the same rows (docs/search.md,
// "Scale"):
// - sorted: the index finds every match, the database sorts them by time and keeps a page.
//   Its cost grows with the number of matches: cheap for a rare query, not for a common one.
// - walk: read messages newest first (message_time_idx) with their terms and keep those the
//   caller may read that hold every term, until the page is full. Its cost grows with how many
//   messages lie between matches: cheap for a common query, not for a rare one.
// How many matches there are chooses: a count capped at `sortedMax` (FTS5 stops at the cap),
// fewer sorted, more walk. On PostgreSQL counting a common word reads its whole GIN posting
// list, so a planner's estimate of `estimatedSortedMax` or more walks without counting (a word
// outside the statistics is estimated at a floor of some thousands in a million rows, so a
// low estimate still needs the count). A
// walk that has read `walkBudget` messages without filling the page (a word common elsewhere
// but rare where the caller may read, or under the filters) hands over to sorted from where it
// stopped, so its extra cost is bounded and the rows are still the same. A query of filters
// alone (no term) walks the messages themselves.

/** The thresholds that choose between the two ways; tests lower them to reach both. */
export interface SearchTuning {
  /** Matches (counted up to this) from which a query walks instead of sorting, per database. */
  sortedMax: Record<Dialect, number>;
  /** PostgreSQL: matches the planner estimates from which a query walks without counting. */
  estimatedSortedMax: number;
  /** Messages a walk reads at most before it hands over to sorting. */
  walkBudget: number;
  /** Messages read by the walk's first step; each further step reads twice as many. */
  walkStep: number;
  /** SQLite: read the matches in the index's time order (`indexOrderRows`) where it applies. */
  indexOrder: boolean;
  /** Rows the first read in index order takes, at least; each further read twice as many. */
  indexOrderFirst: number;
}

export const DEFAULT_SEARCH_TUNING: SearchTuning = {
  // A match costs PostgreSQL a heap visit to count and sort, SQLite a doclist entry.
  sortedMax: { sqlite: 2000, postgres: 1000 },
  estimatedSortedMax: 10_000,
  walkBudget: 10_000,
  walkStep: 256,
  indexOrder: true,
  indexOrderFirst: 32,
};

const KEEP_ALL = () => true;
/** Rows read at a time, at least, while a check in the server may drop some. */
const KEEP_READ_AHEAD = 100;
/** Rows one read in index order takes at most, unless one millisecond holds more. */
const INDEX_ORDER_MAX = 4096;

/**
 * Up to `want` messages that `accountId` may read matching `match` (and `keep`, checked in the
 * server: phrases) and passing the filters, from the keyset position `from` of the newest-first
 * list: older ones strictly `after` it, newest first, or newer ones strictly `before` it, oldest
 * first (the nearest first either way).
 */
export async function findMessages(
  db: Db,
  tuning: SearchTuning,
  accountId: string,
  match: IndexMatch,
  filters: MessageSearchFilters,
  from: KeysetFrom,
  want: number,
  keep: (m: MessageTable) => boolean = KEEP_ALL,
): Promise<MessageTable[]> {
  const found: MessageTable[] = [];
  // While `keep` may drop rows (phrases), read more than the page lacks at a time: each
  // sorted read sorts every match again.
  const ahead = (n: number) => (keep === KEEP_ALL ? n : Math.max(n, KEEP_READ_AHEAD));
  // Each read goes on from the last row of the one before, in the same direction.
  const next = (m: Pick<MessageTable, 'createdAt' | 'id'>): KeysetFrom => ({
    [from.before ? 'before' : 'after']: { at: Number(m.createdAt), id: m.id },
  });
  // Sorted, a page at a time while `keep` drops some.
  const sorted = async (start: KeysetFrom) => {
    let position = start;
    for (;;) {
      const n = ahead(want - found.length);
      const rows = await searchMessageRows(
        db.kysely,
        db.dialect,
        accountId,
        match,
        filters,
        position,
        n,
      );
      for (const m of rows) if (keep(m) && found.push(m) === want) return found;
      const last = rows[rows.length - 1];
      if (rows.length < n || !last) return found;
      position = next(last);
    }
  };
  /**
   * Through the index's time order (SQLite): reads matches the caller may read from FTS5 in
   * `doc` order, puts each millisecond's rows in (time, id) order, and keeps those `keep` keeps
   * until `want`. A read that came back full may have stopped inside a millisecond: that
   * millisecond is read again with the next.
   */
  const inIndexOrder = async () => {
    const back = Boolean(from.before);
    // The walking order: newest first going on (`after`), oldest first going back (`before`).
    const inOrder = (a: MessageTable, b: MessageTable) => {
      const d =
        Number(a.createdAt) - Number(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      return back ? d : -d;
    };
    let position = from;
    let n = Math.max(want, tuning.indexOrderFirst);
    for (;;) {
      const rows = await indexOrderRows(db.kysely, accountId, match, filters, position, n);
      const full = rows.length === n;
      rows.sort(inOrder);
      const lastAt = Number(rows[rows.length - 1]?.createdAt);
      const done = full ? rows.filter((m) => Number(m.createdAt) !== lastAt) : rows;
      for (const m of done) if (keep(m) && found.push(m) === want) return found;
      if (!full) return found;
      const last = done[done.length - 1];
      if (last) {
        position = next(last);
        n = Math.min(n * 2, Math.max(INDEX_ORDER_MAX, n));
      } else {
        // The whole read fell within one millisecond: read it again, twice as many.
        n *= 2;
      }
    }
  };
  const indexed = usesIndex(match);
  const readable = indexed ? null : await searchableConversations(db.kysely, accountId);
  const holds = termsMatcher(match);
  // PostgreSQL walks the index rows in time order (migration 0028) unless a filter names a
  // conversation or an author, whose own indexes on the messages are walked instead.
  const inTimeOrder =
    indexed &&
    db.dialect === 'postgres' &&
    !filters.conversationId &&
    !filters.conversationIds &&
    !filters.authorId;
  const walk = {
    readable,
    position: from,
    read: 0,
    step: tuning.walkStep,
    budget: tuning.walkBudget,
  };
  /**
   * Walks on from where the walk stopped until the page is full (true), the messages end
   * (true), or `stopAt` messages have been read in all (false: hand over or decide).
   */
  const walkOn = async (stopAt: number): Promise<boolean> => {
    walk.readable ??= await searchableConversations(db.kysely, accountId);
    const may = walk.readable;
    while (walk.read < Math.min(walk.budget, stopAt)) {
      let n = Math.min(walk.step, Math.min(walk.budget, stopAt) - walk.read);
      // Once some are found, read about what they say the page still needs (half again, at
      // least a first step's worth) rather than the doubled step: a common query's page ends
      // well inside its last step.
      if (found.length > 0) {
        const needed = Math.ceil((1.5 * (want - found.length) * walk.read) / found.length);
        n = Math.min(n, Math.max(tuning.walkStep, needed));
      }
      let read: number;
      let last: Pick<MessageTable, 'createdAt' | 'id'> | undefined;
      if (inTimeOrder) {
        // PostgreSQL: the database checks the terms and reads the messages that hold them.
        const step = await timeWalkStep(db.kysely, match, filters, walk.position, n);
        for (const message of step.passed) {
          if (!may.has(message.conversationId) || !keep(message)) continue;
          if (found.push(message) === want) return true;
        }
        read = step.read;
        last = step.last ? { createdAt: step.last.at, id: step.last.id } : undefined;
      } else {
        const batch = await messagesWithTerms(
          db.kysely,
          db.dialect,
          filters,
          walk.position,
          n,
          indexed,
        );
        const passed = batch
          .filter((r) => may.has(r.conversationId))
          .filter((r) => (r.terms === null ? !indexed : holds(r.terms)))
          .map((r) => r.id);
        // The rows that passed, read whole (in their order) as many at a time as may be needed.
        for (let i = 0; i < passed.length;) {
          const ids = passed.slice(i, i + ahead(want - found.length));
          i += ids.length;
          const whole = await messagesByIds(db.kysely, ids);
          for (const id of ids) {
            const message = whole.get(id);
            if (!message || !keep(message)) continue;
            if (found.push(message) === want) return true;
          }
        }
        read = batch.length;
        last = batch[batch.length - 1];
      }
      if (read < n || !last) return true;
      walk.position = next(last);
      walk.read += read;
      walk.step *= 2;
      // A walk that has found some at the budget goes on for up to one more budget when they
      // say the page fills within it: handing over would sort every match, read whole a
      // hundred at a time while `keep` drops some (a phrase whose words are common but seldom
      // side by side).
      if (walk.read >= walk.budget && walk.budget === tuning.walkBudget && found.length > 0) {
        const needed = ((want - found.length) * walk.read) / found.length;
        if (needed <= tuning.walkBudget) walk.budget += tuning.walkBudget;
      }
    }
    return false;
  };

  // SQLite, for words without a prefix and filters that name no conversation or author: FTS5
  // reads the matches newest first (migration 0027), so the page costs the matches it takes,
  // read whole, and neither a count nor a walk is needed. A prefix would have FTS5 merge the
  // lists of every term it begins first; a named conversation or author has its own index,
  // which the walk follows.
  if (
    indexed &&
    tuning.indexOrder &&
    db.dialect === 'sqlite' &&
    match.prefixes.length === 0 &&
    !filters.conversationId &&
    !filters.conversationIds &&
    !filters.authorId
  ) {
    return inIndexOrder();
  }
  if (indexed) {
    // A prefix is counted by merging the lists of every term it begins (FTS5 and GIN alike)
    // before the first is returned: a common one ("deplo*") costs more to count than to find.
    // Its search walks a first step, which fills a common prefix's page, and counts only if
    // it did not; the walk's messages stay read, so either way goes on from where it stopped.
    if (match.prefixes.length > 0 && (await walkOn(tuning.walkStep))) return found;
    const cap = tuning.sortedMax[db.dialect];
    const common =
      (db.dialect === 'postgres' &&
        (await estimateMatches(db.kysely, match)) >= tuning.estimatedSortedMax) ||
      (await countMatches(db.kysely, db.dialect, match, cap)) >= cap;
    if (!common) return sorted(walk.position);
  }
  if (await walkOn(Infinity)) return found;
  return sorted(walk.position);
}
