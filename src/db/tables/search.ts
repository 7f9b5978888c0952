// Row types added by migration 0011-search (docs/search.md).

/**
 * The search terms of one indexable message: its text's distinct terms from the server's
 * tokenizer (`services/search/tokenize.ts`), joined by single spaces. Only plaintext messages
 * that are not deleted have a row. On SQLite an integer `doc` column (not typed here) keys the
 * FTS5 table `message_search_fts` that triggers keep in step; PostgreSQL has a GIN index over
 * the terms as an array instead.
 */
export interface MessageSearchTable {
  messageId: string;
  terms: string;
}

/**
 * The backfill of messages sent before the index existed (one row, `id` = 'messages', while it
 * is under way): the keyset position (send time, id) of the last message indexed, null before
 * the first batch. The `search-backfill` job moves it on and deletes the row when done.
 */
export interface SearchBackfillTable {
  id: string;
  afterAt: number | null;
  afterId: string | null;
}

/**
 * The language search stems a short message in when detection cannot tell (docs/search.md,
 * "Languages"): for an account (its messages) or a workspace (its members' messages, unless
 * the author chose one). `id` is the account's or the workspace's id; `language` a code search
 * stems (`services/search/languages.ts`).
 */
export interface SearchLanguageTable {
  id: string;
  language: string;
}
