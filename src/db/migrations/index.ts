import type { Migration } from 'kysely';

import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-collaboration.js';

/**
 * Every migration, in order. Append-only: a shipped migration is never edited; a change is a new
 * file listed at the end.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-collaboration': m0002,
};
