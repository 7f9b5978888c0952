import { validation } from '../../errors.js';
import { decodeCursor, encodeCursor, type CursorPosition } from '../../lib/cursor.js';

// Keyset pages over (time, id) (contract: Pagination). A request names at most one cursor and so
// a direction; the page answers `nextCursor` to continue that way and `prevCursor` to go back.

export const PAGE_MAX = 100;

export interface PageArgs {
  before?: string | null;
  after?: string | null;
  limit?: number | null;
}

export interface ParsedPage {
  before?: CursorPosition;
  after?: CursorPosition;
  limit: number;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  prevCursor: string | null;
  hasMore: boolean;
}

/** VALIDATION for both cursors, a forged cursor, or a limit outside 1..100. */
export function parsePageArgs(args: PageArgs, defaultLimit = 50): ParsedPage {
  const limit = args.limit ?? defaultLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX) {
    throw validation(`limit must be between 1 and ${PAGE_MAX}`);
  }
  if (args.before && args.after) throw validation('pass at most one of before and after');
  const out: ParsedPage = { limit };
  if (args.before) out.before = decodeCursor(args.before);
  if (args.after) out.after = decodeCursor(args.after);
  return out;
}

export const cursorOf = (at: number, id: string) => encodeCursor({ at, id });
