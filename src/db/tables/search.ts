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
