// The paging area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export {
  inlineInteger,
  keyCursor,
  keysetPageOf,
  keysetQuery,
  keysetRows,
  keysetSlice,
  parseKeysetArgs,
  pastCursor,
} from './keyset.js';
export type { KeysetArgs, KeysetFrom, KeysetPage } from './keyset.js';
