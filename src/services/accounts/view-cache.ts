import type { Db } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';
import type { EventBus } from '../../events/bus.js';
import type { EventPort } from '../../events/port.js';
import { SharedCache } from '../../events/shared-cache.js';

import { toAccountView, type AccountView } from './account-view.js';
import { accountViewsByIds } from './queries.js';

/** Accounts kept per process; a message page names up to 50 authors. */
const MAX_VIEWS = 50_000;

/**
 * The accounts that pages of messages, member lists and mentions show as `User`, kept in each
 * process's memory (docs/durability.md, "Cached reads"). Who may do what is never read from
 * here: sessions, roles and blocks are read from the database on every request. Whoever changes
 * an account's shown fields (display name, avatar, operator flag, deletion date, tombstone)
 * calls `changedOnCommit` (or `changed` after a write outside a transaction): the entry goes at
 * once on this process and, through the event outbox, on every other process and from the
 * command line.
 */
export class AccountViewCache {
  private readonly cache: SharedCache<AccountView | null>;

  constructor(
    private readonly db: Db,
    bus: EventBus,
    events: EventPort,
    opts: { ttlMs?: number; now?: () => number } = {},
  ) {
    this.cache = new SharedCache(bus, { name: 'account-views', max: MAX_VIEWS, events, ...opts });
  }

  /** The live accounts among `ids` (a purged account is left out), in no particular order. */
  async byIds(ids: readonly string[]): Promise<AccountView[]> {
    const found = await this.cache.getMany(ids, async (missing) => {
      const rows = await accountViewsByIds(this.db.kysely, missing);
      // An id with no row is not kept: only ids read from stored rows are asked for, and such
      // an account exists; a purged one is kept as null until its tombstone is dropped.
      const views = new Map<string, AccountView | null>();
      for (const row of rows) views.set(row.id, row.deletedAt === null ? toAccountView(row) : null);
      return views;
    });
    const out: AccountView[] = [];
    for (const view of found.values()) if (view) out.push(view);
    return out;
  }

  /** The account's shown fields change in `tx`: dropped everywhere once it commits. */
  changedOnCommit(tx: Tx, accountId: string): void {
    this.cache.invalidateOnCommit(tx, accountId);
  }

  /** The account's shown fields changed (a write that committed on its own). */
  changed(accountId: string): void {
    this.cache.invalidate(accountId);
  }
}
