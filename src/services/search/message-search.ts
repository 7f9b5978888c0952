import type { Executor } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/messages.js';
import { validation } from '../../errors.js';
import { lookupKey } from '../accounts/index.js';

import type { IndexMatch, MessageSearchFilters } from './match-queries.js';
import { holdsPhrase, type ParsedQuery } from './query-grammar.js';
import { accountByUsernameKey, channelsNamed, directConversation } from './scope-queries.js';
import { tokenize } from './tokenize.js';

// A parsed query (query-grammar.ts) turned into what the index must hold, the filters its
// operators add to those given, and the check of its phrases (docs/search.md).

export interface ResolvedSearch {
  match: IndexMatch;
  filters: MessageSearchFilters;
  /** Checked in the server after the index: the phrases stand side by side. */
  keep: (m: MessageTable) => boolean;
  /** False when the operators leave nothing to find (a person or channel with no messages). */
  possible: boolean;
}

const intersect = (a: number | null | undefined, b: number | null, pick: typeof Math.max) =>
  a === null || a === undefined ? b : b === null ? a : pick(a, b);

export async function resolveSearch(
  db: Executor,
  accountId: string,
  parsed: ParsedQuery,
  given: MessageSearchFilters,
): Promise<ResolvedSearch> {
  const filters: MessageSearchFilters = { ...given };
  let possible = true;
  filters.from = intersect(given.from, parsed.since, Math.max);
  filters.to = intersect(given.to, parsed.until, Math.min);
  if (parsed.hasFile) {
    if (given.hasAttachment === false) possible = false;
    filters.hasAttachment = true;
  }
  if (parsed.isThread) filters.isThread = true;

  const authors = new Set<string>();
  for (const name of parsed.from) {
    const account = await accountByUsernameKey(db, lookupKey(name));
    if (!account) throw validation(`from:@${name}: nobody has that username`);
    authors.add(account.id);
  }
  if (authors.size > 1) possible = false;
  const [author] = authors;
  if (author) {
    if (given.authorId && given.authorId !== author) possible = false;
    filters.authorId = author;
  }

  for (const place of parsed.in) {
    let ids: string[];
    if (place.startsWith('@')) {
      const account = await accountByUsernameKey(db, lookupKey(place.slice(1)));
      if (!account) throw validation(`in:${place}: nobody has that username`);
      const direct = await directConversation(db, accountId, account.id);
      ids = direct ? [direct] : [];
    } else {
      ids = await channelsNamed(db, accountId, place.slice(1), given.workspaceId);
      if (ids.length === 0) {
        throw validation(`in:${place}: no channel of that name in your workspaces`);
      }
    }
    filters.conversationIds = filters.conversationIds
      ? filters.conversationIds.filter((id) => ids.includes(id))
      : ids;
  }

  const phrases = parsed.phrases.filter((p) => p.length > 1);
  const keep =
    phrases.length === 0
      ? () => true
      : (m: MessageTable) => {
          const terms = tokenize(m.text ?? '');
          return phrases.every((p) => holdsPhrase(terms, p));
        };
  return {
    match: { groups: parsed.groups, prefixes: parsed.prefixes, excluded: parsed.excluded },
    filters,
    keep,
    possible,
  };
}

/** Whether a parsed query asks for anything: a word, a prefix, or an operator. */
export function asksAnything(parsed: ParsedQuery): boolean {
  return (
    parsed.groups.length > 0 ||
    parsed.prefixes.length > 0 ||
    parsed.from.length > 0 ||
    parsed.in.length > 0 ||
    parsed.since !== null ||
    parsed.until !== null ||
    parsed.hasFile ||
    parsed.isThread
  );
}
