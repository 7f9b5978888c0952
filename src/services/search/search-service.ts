import { actingAccountId, assertInstanceOperator, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import { validation } from '../../errors.js';
import type { Authz } from '../authz/index.js';
import { keyCursor, keysetPageOf, parseKeysetArgs } from '../paging/index.js';
import type { ChannelService } from '../channels/index.js';
import type { WorkspaceMemberView, WorkspaceService } from '../workspaces/index.js';

import { preloadLexicons } from './compounds.js';
import type { HeldTerms } from './held-terms.js';
import { DEFAULT_SEARCH_TUNING, findMessages, type SearchTuning } from './find-messages.js';
import { excerptOf, highlightsOf, type Excerpt, type Highlight } from './highlight.js';
import { FLAG_MARK, isLanguageCode, LANGUAGE_CODES } from './languages.js';
import { joinedAmong, type MessageSearchFilters } from './match-queries.js';
import { asksAnything, resolveSearch, type ResolvedSearch } from './message-search.js';
import {
  countToIndex,
  dropMessageTerms,
  findBackfill,
  finishBackfill,
  saveBackfill,
  setSearchLanguage,
  messagesToIndex,
  rewriteMessageTerms,
  startBackfill,
} from './queries.js';
import { parseQuery, type ParsedQuery } from './query-grammar.js';
import {
  decodeRelevanceCursor,
  encodeRelevanceCursor,
  rankByRelevance,
  RELEVANCE_CANDIDATES,
} from './relevance.js';
import { searchLanguage } from './scope-queries.js';
import { tokenize } from './tokenize.js';

/** What search is built from (context.ts). */
export interface SearchServiceDeps {
  db: Db;
  workspaces: WorkspaceService;
  channels: ChannelService;
  authz: Authz;
  /** New messages' index rows not yet written: a search writes them first. */
  heldTerms: HeldTerms;
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
  excerpt: Excerpt;
  /** False for a public channel the searcher has not joined. */
  joined: boolean;
}

export interface MessageHitPage {
  items: MessageHit[];
  hasMore: boolean;
  nextCursor: string | null;
  prevCursor: string | null;
}

export type SearchOrder = 'NEWEST' | 'RELEVANCE';

export interface MessageSearchArgs extends MessageSearchFilters {
  query: unknown;
  order?: SearchOrder | null;
  after?: string | null;
  before?: string | null;
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
    preloadLexicons();
  }

  /** New messages' index rows not yet written (search/held-terms.ts). */
  get held(): HeldTerms {
    return this.deps.heldTerms;
  }

  /**
   * Messages the caller may read that match the query (query-grammar.ts) and the filters, in
   * the order asked, each with the ranges of its text that matched and an excerpt. A query
   * that asks for nothing (no word, no operator) finds nothing.
   */
  async messages(actor: Actor, args: MessageSearchArgs): Promise<MessageHitPage> {
    const accountId = actingAccountId(actor);
    const parsed = checkQuery(args.query);
    const limit = checkLimit(args.limit);
    if (args.after && args.before) throw validation('pass at most one of after and before');
    if (typeof args.from === 'number' && typeof args.to === 'number' && args.from >= args.to) {
      throw validation('from must be before to');
    }
    const empty = { items: [], hasMore: false, nextCursor: null, prevCursor: null };
    if (!asksAnything(parsed)) return empty;
    // What this process acknowledged is found: its held index rows are written first.
    await this.deps.heldTerms.flush();
    const search = await resolveSearch(this.db.kysely, accountId, parsed, args);
    const f = search.filters;
    if (
      !search.possible ||
      (typeof f.from === 'number' && typeof f.to === 'number' && f.from >= f.to)
    )
      return empty;
    if (args.order === 'RELEVANCE') return this.byRelevance(accountId, parsed, search, args, limit);
    const page = parseKeysetArgs(args, { max: SEARCH_PAGE_MAX, default: limit });
    const rows = await findMessages(
      this.db,
      this.tuning,
      accountId,
      search.match,
      search.filters,
      page,
      limit + 1,
      search.keep,
    );
    const found = keysetPageOf(rows, page, (m) => keyCursor(Number(m.createdAt), m.id));
    return { ...found, items: await this.hits(accountId, found.items, parsed) };
  }

  /** The page's results with their highlights, excerpts and whether the caller has joined. */
  private async hits(accountId: string, page: MessageTable[], parsed: ParsedQuery) {
    const joined = await joinedAmong(this.db.kysely, accountId, [
      ...new Set(page.map((m) => m.conversationId)),
    ]);
    const spec = {
      terms: new Set(parsed.groups.flat().filter((t) => !t.startsWith(FLAG_MARK))),
      prefixes: parsed.prefixes,
    };
    return page.map((m) => {
      const highlights = highlightsOf(m.text ?? '', spec);
      return {
        message: m,
        highlights,
        excerpt: excerptOf(m.text ?? '', highlights),
        joined: joined.has(m.conversationId),
      };
    });
  }

  /**
   * The page of `RELEVANCE` order: the newest RELEVANCE_CANDIDATES matches (at or before the
   * cursor's bound, so the set stays the same from page to page) ranked, then sliced: the
   * `limit` results from the cursor's offset on (`after`), or the ones before it (`before`).
   */
  private async byRelevance(
    accountId: string,
    parsed: ParsedQuery,
    search: ResolvedSearch,
    args: MessageSearchArgs,
    limit: number,
  ): Promise<MessageHitPage> {
    const given = args.after ?? args.before;
    const cursor = given ? decodeRelevanceCursor(given) : null;
    // Strictly before (through + 1 ms, the smallest id): at or before `through`.
    const bound = cursor ? { after: { at: cursor.through + 1, id: '' } } : {};
    const candidates = await findMessages(
      this.db,
      this.tuning,
      accountId,
      search.match,
      search.filters,
      bound,
      RELEVANCE_CANDIDATES,
      search.keep,
    );
    const ranked = rankByRelevance(candidates, parsed);
    const through = cursor?.through ?? Math.max(0, ...candidates.map((m) => Number(m.createdAt)));
    const at = (offset: number) => encodeRelevanceCursor({ through, offset });
    const offset = Math.min(cursor?.offset ?? 0, ranked.length);
    const back = args.before !== undefined && args.before !== null;
    const start = back ? Math.max(0, offset - limit) : offset;
    const end = back ? offset : Math.min(ranked.length, offset + limit);
    const items = await this.hits(accountId, ranked.slice(start, end), parsed);
    // As every page: nextCursor goes on in the direction asked, prevCursor goes back.
    return back
      ? {
          items,
          hasMore: start > 0,
          nextCursor: start > 0 ? at(start) : null,
          prevCursor: end < ranked.length ? at(end) : null,
        }
      : {
          items,
          hasMore: ranked.length > end,
          nextCursor: ranked.length > end ? at(end) : null,
          prevCursor: start > 0 ? at(start) : null,
        };
  }

  /**
   * The language search stems the caller's (or, with `serverId`, a workspace's) short messages
   * in; null clears it. A workspace's is set by its owner or a moderator.
   */
  async setLanguage(actor: Actor, language: unknown, serverId?: string | null) {
    const accountId = actingAccountId(actor);
    if (language !== null && (typeof language !== 'string' || !isLanguageCode(language))) {
      throw validation(
        `language must be one of ${LANGUAGE_CODES.join(', ')} (ISO 639-1), or null to clear it`,
      );
    }
    let id = accountId;
    if (serverId) {
      // Owner and moderators, as the workspace's other settings.
      await this.deps.authz.assertCan(actor, 'workspace:update', { workspaceId: serverId });
      id = serverId;
    }
    await setSearchLanguage(this.db.kysely, id, language);
    return language;
  }

  /** The language set for the caller, or with `serverId` for a workspace (null: none). */
  async language(actor: Actor, serverId?: string | null) {
    const accountId = actingAccountId(actor);
    if (serverId) {
      await this.deps.authz.assertCan(actor, 'workspace:read', { workspaceId: serverId });
      return searchLanguage(this.db.kysely, serverId);
    }
    return searchLanguage(this.db.kysely, accountId);
  }

  /**
   * Members of a workspace whose username or display name matches (`nameMatches`), for
   * mention pickers; the members the caller may list (a guest sees only themself). Accounts
   * being purged are never listed.
   */
  async members(actor: Actor, serverId: string, query: unknown, limit?: number | null) {
    const terms = nameQuery(query);
    const n = checkLimit(limit);
    const found: WorkspaceMemberView[] = [];
    let after: string | null = null;
    // Walks the member list: fine for workspaces of thousands (docs/search.md, "Scale").
    for (;;) {
      const page = await this.deps.workspaces.members.membersPage(actor, serverId, {
        after,
        limit: 200,
      });
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
    const terms = nameQuery(query);
    const n = checkLimit(limit);
    const rows = await this.deps.channels.list(actor, serverId, { includeArchived: true });
    return rows.filter((c) => nameMatches(terms, c.name, c.topic)).slice(0, n);
  }

  /** Workspaces the caller belongs to whose name matches (the direct space never does). */
  async workspaces(actor: Actor, query: unknown, limit?: number | null) {
    const terms = nameQuery(query);
    const n = checkLimit(limit);
    const rows = await this.deps.workspaces.lifecycle.listMine(actor);
    return rows.filter((w) => !w.isDirect && nameMatches(terms, w.name)).slice(0, n);
  }

  /** The removal hook: removed messages leave the index in the removing transaction. */
  async onMessagesRemoved(tx: Tx, messageIds: readonly string[]): Promise<void> {
    await dropMessageTerms(tx.db, messageIds);
  }

  /**
   * Rebuilds the index from the messages, oldest first, one short transaction per batch so the
   * server keeps serving meanwhile (rows not yet rewritten keep their old terms). It continues
   * the backfill under way, if any (a rebuild stopped half-way, or the one a migration
   * started), else starts one; each batch saves its position with it, so a stopped rebuild
   * resumes where it stopped. `onBatch` hears the messages done and how many were left at the
   * start. Returns how many messages were read. Instance operators only (the CLI).
   */
  async reindex(
    actor: Actor,
    batchSize: number,
    onBatch?: (progress: { done: number; total: number; resumed: boolean }) => void | Promise<void>,
  ): Promise<number> {
    assertInstanceOperator(actor, 'only an instance operator may rebuild the search index');
    const state = await findBackfill(this.db.kysely, 'sqlite');
    const resumed = state !== undefined && state.afterAt !== null;
    if (!state) await startBackfill(this.db.kysely);
    const from =
      state && state.afterAt !== null && state.afterId !== null
        ? { at: Number(state.afterAt), id: state.afterId }
        : null;
    const total = await countToIndex(this.db.kysely, from);
    let done = 0;
    for (;;) {
      const batch = await this.db.transaction(async (tx) => {
        const now = await findBackfill(tx.db, tx.dialect);
        if (!now) return { count: 0, finished: true };
        const after =
          now.afterAt !== null && now.afterId !== null
            ? { at: Number(now.afterAt), id: now.afterId }
            : null;
        const b = await indexBatch(tx, after, batchSize);
        if (b.count < batchSize) {
          await finishBackfill(tx.db);
          return { count: b.count, finished: true };
        }
        await saveBackfill(tx.db, b.last!);
        return { count: b.count, finished: false };
      });
      done += batch.count;
      await onBatch?.({ done, total, resumed });
      if (batch.finished) return done;
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
        const state = await findBackfill(tx.db, tx.dialect);
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

function checkQuery(query: unknown): ParsedQuery {
  if (typeof query !== 'string') throw validation('query must be a string');
  if ([...query].length > QUERY_CHARS_MAX) {
    throw validation(`query must be at most ${QUERY_CHARS_MAX} characters`);
  }
  const parsed = parseQuery(query);
  if (parsed.groups.length + parsed.prefixes.length > QUERY_TERMS_MAX) {
    throw validation(`query must hold at most ${QUERY_TERMS_MAX} distinct words`);
  }
  return parsed;
}

/** The terms of a name query (people and places): its words, folded. */
function nameQuery(query: unknown): string[] {
  if (typeof query !== 'string') throw validation('query must be a string');
  if ([...query].length > QUERY_CHARS_MAX) {
    throw validation(`query must be at most ${QUERY_CHARS_MAX} characters`);
  }
  const terms = [...new Set(tokenize(query))];
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
