import { conversations, users } from '../state/store.ts';

// What the search box offers while one types (docs/search.md, "Query grammar"): the operators
// that begin with the word being typed, and for `from:@` and `in:#` the people and channels the
// client knows that begin so. Choosing one replaces the word being typed.

const OPERATORS: Array<{ text: string; hint: string }> = [
  { text: 'from:@', hint: 'written by a person' },
  { text: 'in:#', hint: 'in a channel' },
  { text: 'in:@', hint: 'in a direct conversation' },
  { text: 'before:', hint: 'sent before a day, YYYY-MM-DD' },
  { text: 'after:', hint: 'sent after a day, YYYY-MM-DD' },
  { text: 'on:', hint: 'sent on a day or in a month' },
  { text: 'has:file', hint: 'with a file' },
  { text: 'has:link', hint: 'with a link' },
  { text: 'is:thread', hint: 'in a thread' },
];

export interface Suggestion {
  /** The word that replaces the one being typed. */
  text: string;
  hint: string;
}

/** The word being typed: after the last space, unless inside an open quote. */
function lastWord(query: string): string {
  const quotes = (query.match(/"/g) ?? []).length;
  if (quotes % 2 === 1) return '';
  const at = query.search(/\S*$/);
  return query.slice(at);
}

export function suggestionsFor(query: string, max = 6): Suggestion[] {
  const word = lastWord(query);
  if (!word) return [];
  const lower = word.toLowerCase();
  const people = (prefix: string, value: string) =>
    Object.values(users.value)
      .filter((u) => u.username.toLowerCase().startsWith(value))
      .map((u) => ({ text: `${prefix}${u.username}`, hint: u.displayName ?? u.username }));
  if (lower.startsWith('from:@') || lower.startsWith('in:@')) {
    const prefix = lower.startsWith('from:@') ? 'from:@' : 'in:@';
    return people(prefix, lower.slice(prefix.length)).slice(0, max);
  }
  if (lower.startsWith('in:#')) {
    const value = lower.slice(4);
    const names = new Set(
      Object.values(conversations.value)
        .filter((c) => c.kind === 'CHANNEL' && c.name?.toLowerCase().startsWith(value))
        .map((c) => c.name!),
    );
    return [...names].slice(0, max).map((n) => ({ text: `in:#${n}`, hint: 'channel' }));
  }
  if (word.length < 2) return [];
  return OPERATORS.filter((o) => o.text.startsWith(lower) && o.text !== lower).slice(0, max);
}

/** `query` with the word being typed replaced by `text`. */
export function applySuggestion(query: string, text: string): string {
  const at = query.search(/\S*$/);
  const head = query.slice(0, at);
  // A finished operator (has:file) or a name ends the word; a bare one waits for its value.
  const done = !/[:@#"-]$/.test(text);
  return `${head}${text}${done ? ' ' : ''}`;
}
