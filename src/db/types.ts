import type { Kysely, Transaction } from 'kysely';

import type { Database } from './schema.js';

/** Which database runs underneath. */
export type Dialect = 'sqlite' | 'postgres';

/** What a query function takes first: the root Kysely instance, or a transaction's. */
export type Executor = Kysely<Database> | Transaction<Database>;
