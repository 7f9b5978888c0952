import { actingAccountId, assertInstanceOperator, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/collaboration.js';
import type { Tx } from '../../db/transaction.js';
import { validation } from '../../errors.js';
import { decodeCursor, encodeCursor } from '../../lib/cursor.js';
import type { ChannelService } from '../channels/channel-service.js';
import type { WorkspaceMemberView } from '../workspaces/views.js';
import type { WorkspaceService } from '../workspaces/workspace-service.js';

import { DEFAULT_SEARCH_TUNING, findMessages, type SearchTuning } from './find-messages.js';
import { highlightsOf, type Highlight } from './highlight.js';
import {
  dropMessageTerms,
  findBackfill,
  finishBackfill,
  saveBackfill,
  messagesToIndex,
  rewriteMessageTerms,
  type MessageSearchFilters,
} from './queries.js';
import {
  decodeRelevanceCursor,
  encodeRelevanceCursor,
  rankByRelevance,
  RELEVANCE_CANDIDATES,
} from './relevance.js';
import { queryTerms, tokenize } from './tokenize.js';

/** What search is built from (context.ts). */
export interface SearchServiceDeps {
  db: Db;
  workspaces: WorkspaceService;
  channels: ChannelService;
  /** How a message search chooses its way (find-messages.ts); the defaults suit production. */
  tuning?: Partial<SearchTuning>;
}

/** Longest query, in characters. */
export const QUERY_CHARS_MAX = 500;
/** Most distinct terms a query may hold (a long CJK query makes one per character). */
export const QUERY_TERMS_MAX = 32;
export const SEARCH_PAGE_MAX = 100;

export interface MessageHit {
  message: MessageTable;
  highlights: Highlight[];
}

export interface MessageHitPage {
  items: MessageHit[];
  hasMore: boolean;
  nextCursor: string | null;
}

export type SearchOrder = 'NEWEST' | 'RELEVANCE';

export interface MessageSearchArgs extends MessageSearchFilters {
  query: unknown;
  order?: SearchOrder | null;
  after?: string | null;
  limit?: number | null;
}

/**
 * Search (docs/search.md): messages through the index that the message writes keep in their
 * own transactions, and people and places by folded name.
 */
export class SearchService {
  private readonly db: Db;
  private readonly tuning: SearchTuning;

  constructor(private readonly deps: SearchServiceDeps) {
    this.db = deps.db;
    this.tuning = { ...DEFAULT_SEARCH_TUNING, ...deps.tuning };
  }

  /**
   * Messages the caller may read that hold every term of the query, newest first, each with
   * the ranges of its text that matched. A query without a term finds nothing.
   */
  async messages(actor: Actor, args: MessageSearchArgs): Promise<MessageHitPage> {
    const accountId = actingAccountId(actor);
    const terms = checkQuery(args.query);
    const limit = checkLimit(args.limit);
    if (typeof args.from === 'number' && typeof args.to === 'number' && args.from >= args.to) {
      throw validation('from must be before to');
    }
    if (terms.length === 0) return { items: [], hasMore: false, nextCursor: null };
    if (args.order === 'RELEVANCE') return this.byRelevance(accountId, terms, args, limit);
    const before = args.after ? decodeCursor(args.after) : null;
    const rows = await findMessages(
      this.db,
      this.tuning,
      accountId,
      terms,
      args,
      before,
      limit + 1,
    );
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map((m) => ({ message: m, highlights: highlightsOf(m.text ?? '', terms) })),
      hasMore,
      nextCursor:
        hasMore && last ? encodeCursor({ at: Number(last.createdAt), id: last.id }) : null,
    };
  }

  /**
   * The page of `RELEVANCE` order: the newest RELEVANCE_CANDIDATES matches (at or before the
   * cursor's bound, so the set stays the same from page to page) ranked, then sliced.
   */
  private async byRelevance(
    accountId: string,
    terms: string[],
    args: MessageSearchArgs,
    limit: number,
  ): Promise<MessageHitPage> {
    const cursor = args.after ? decodeRelevanceCursor(args.after) : null;
    // Strictly before (through + 1 ms, the smallest id): at or before `through`.
    const before = cursor ? { at: cursor.through + 1, id: '' } : null;
    const candidates = await findMessages(
      this.db,
      this.tuning,
      accountId,
      terms,
      args,
      before,
      RELEVANCE_CANDIDATES,
    );
    const offset = cursor?.offset ?? 0;
    const ranked = rankByRelevance(candidates, String(args.query));
    const page = ranked.slice(offset, offset + limit);
    const hasMore = ranked.length > offset + limit;
    const through = cursor?.through ?? Math.max(0, ...candidates.map((m) => Number(m.createdAt)));
    return {
      items: page.map((m) => ({ message: m, highlights: highlightsOf(m.text ?? '', terms) })),
      hasMore,
      nextCursor: hasMore ? encodeRelevanceCursor({ through, offset: offset + limit }) : null,
    };
  }

  /**
   * Members of a workspace whose username or display name matches (`nameMatches`), for
   * mention pickers; the members the caller may list (a guest sees only themself). Accounts
   * being purged are never listed.
   */
  async members(actor: Actor, serverId: string, query: unknown, limit?: number | null) {
    const terms = checkQuery(query);
    const n = checkLimit(limit);
    const found: WorkspaceMemberView[] = [];
    let after: string | null = null;
    // Walks the member list: fine for workspaces of thousands (docs/search.md, "Scale").
    for (;;) {
      const page = await this.deps.workspaces.membersPage(actor, serverId, { after, limit: 200 });
      for (const m of page.items) {
        if (nameMatches(terms, m.user.username, m.user.displayName)) found.push(m);
      }
      if (found.length >= n || !page.nextCursor) break;
      after = page.nextCursor;
    }
    return found.slice(0, n);
  }

  /** Channels of a workspace the caller can see whose name or topic matches, by name. */
  async channels(actor: Actor, serverId: string, query: unknown, limit?: number | null) {
    const terms = checkQuery(query);
    const n = checkLimit(limit);
    const rows = await this.deps.channels.list(actor, serverId, { includeArchived: true });
    return rows.filter((c) => nameMatches(terms, c.name, c.topic)).slice(0, n);
  }

  /** Workspaces the caller belongs to whose name matches (the direct space never does). */
  async workspaces(actor: Actor, query: unknown, limit?: number | null) {
    const terms = checkQuery(query);
    const n = checkLimit(limit);
    const rows = await this.deps.workspaces.listMine(actor);
    return rows.filter((w) => !w.isDirect && nameMatches(terms, w.name)).slice(0, n);
  }

  /** The removal hook: removed messages leave the index in the removing transaction. */
  async onMessagesRemoved(tx: Tx, messageIds: readonly string[]): Promise<void> {
    await dropMessageTerms(tx.db, messageIds);
  }

  /**
   * Rebuilds the index from the messages, oldest first, one short transaction per batch so the
   * server keeps serving meanwhile; `onBatch` hears the running count. Returns how many
   * messages were read. Instance operators only (the CLI).
   */
  async reindex(
    actor: Actor,
    batchSize: number,
    onBatch?: (done: number) => void,
  ): Promise<number> {
    assertInstanceOperator(actor, 'only an instance operator may rebuild the search index');
    let after: Position | null = null;
    let done = 0;
    for (;;) {
      const batch = await this.db.transaction((tx) => indexBatch(tx, after, batchSize));
      done += batch.count;
      after = batch.last;
      onBatch?.(done);
      if (batch.count < batchSize) return done;
    }
  }

  /**
   * The `search-backfill` job: indexes up to `batches` batches of the messages sent before the
   * index existed, from where the last run stopped, each batch with its position in one short
   * transaction. Returns true when nothing is left to do.
   */
  async backfill(batches: number, batchSize: number): Promise<boolean> {
    for (let i = 0; i < batches; i += 1) {
      const finished = await this.db.transaction(async (tx) => {
        const state = await findBackfill(tx.db);
        if (!state) return true;
        const after =
          state.afterAt !== null && state.afterId !== null
            ? { at: Number(state.afterAt), id: state.afterId }
            : null;
        const batch = await indexBatch(tx, after, batchSize);
        if (batch.count < batchSize) {
          await finishBackfill(tx.db);
          return true;
        }
        await saveBackfill(tx.db, batch.last!);
        return false;
      });
      if (finished) return true;
    }
    return false;
  }
}

type Position = { at: number; id: string };

/** Rewrites the index rows of the batch of messages after `after`; its size and last position. */
async function indexBatch(tx: Tx, after: Position | null, batchSize: number) {
  const rows = await messagesToIndex(tx.db, tx.dialect, after, batchSize);
  await rewriteMessageTerms(tx.db, rows);
  const last = rows[rows.length - 1];
  return { count: rows.length, last: last ? { at: Number(last.createdAt), id: last.id } : after };
}

/**
 * People and places match when every query term begins a term of one of the names, after the
 * same folding as messages: "mar" finds "Marie Dupont", "zoe" finds "Zoë", "東" finds "東京".
 * A query without a term matches nothing.
 */
export function nameMatches(terms: readonly string[], ...names: Array<string | null>): boolean {
  if (terms.length === 0) return false;
  const nameTerms = names.flatMap((n) => (n ? tokenize(n) : []));
  return terms.every((t) => nameTerms.some((nt) => nt.startsWith(t)));
}

function checkQuery(query: unknown): string[] {
  if (typeof query !== 'string') throw validation('query must be a string');
  if ([...query].length > QUERY_CHARS_MAX) {
    throw validation(`query must be at most ${QUERY_CHARS_MAX} characters`);
  }
  const terms = queryTerms(query);
  if (terms.length > QUERY_TERMS_MAX) {
    throw validation(`query must hold at most ${QUERY_TERMS_MAX} distinct words`);
  }
  return terms;
}

function checkLimit(limit: number | null | undefined): number {
  const n = limit ?? 20;
  if (!Number.isInteger(n) || n < 1 || n > SEARCH_PAGE_MAX) {
    throw validation(`limit must be between 1 and ${SEARCH_PAGE_MAX}`);
  }
  return n;
}
