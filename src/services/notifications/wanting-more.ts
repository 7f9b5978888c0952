import type { Db } from '../../db/database.js';
import type { Tx } from '../../db/transaction.js';

import { membersWantingMore, wantingMoreEverywhere } from './queries.js';

/** Who could want more than mentions anywhere: what the read of each channel message starts from. */
interface Snapshot {
  /** Accounts whose own setting says `all`, or who have keywords. */
  accounts: Set<string>;
  /** Workspaces and conversations with a rule saying `all`, each with at least one. */
  scopes: Set<string>;
}

/**
 * Skips the fan-out's read of who wants more than mentions in a channel (`membersWantingMore`,
 * one statement for every channel message) when nobody could: no account's own setting says
 * `all` or has keywords, and no rule on the conversation or its workspace says `all`. What could
 * is kept in memory per process (the settings and rules that say so, a few rows), and where it
 * could, the read is made as before, against the database: membership is never taken from here.
 *
 * Exact, not eventually right: the notifications area is the only writer of both tables, and
 * each change calls `changing(tx)` before it writes. From then until its transaction has ended
 * every question is read from the database, and the snapshot is read again afterwards; a
 * snapshot read while a change was under way is not kept. So a send committed after a change
 * commits is fanned out with the change. Removals (an account purged, a workspace deleted) only
 * leave the snapshot larger than the truth, which costs a read and changes nothing. Only where
 * every change passes through this process (one server, no Redis); elsewhere every message reads.
 */
export class WantingMore {
  private snapshot: Snapshot | null = null;
  private loading: Promise<Snapshot | null> | null = null;
  /** Bumped by every change that starts or ends: a snapshot read across one is not kept. */
  private generation = 0;
  /** Changes whose transaction has not ended yet. */
  private changes = 0;
  /** Channel messages answered without a read (tests and metrics). */
  skipped = 0;

  constructor(
    private readonly db: Db,
    private readonly enabled: boolean,
  ) {}

  /** Called in a transaction that changes a setting or a rule, before it writes. */
  changing(tx: Tx): void {
    this.changes += 1;
    this.drop();
    tx.onSettled(() => {
      this.changes -= 1;
      this.drop();
    });
  }

  /** The members of a channel who want more than mentions, as `membersWantingMore` reads them. */
  async members(conversationId: string, workspaceId: string) {
    const known = await this.current();
    if (
      known &&
      known.accounts.size === 0 &&
      !known.scopes.has(conversationId) &&
      !known.scopes.has(workspaceId)
    ) {
      this.skipped += 1;
      return [];
    }
    return membersWantingMore(this.db.kysely, conversationId, workspaceId);
  }

  private drop(): void {
    this.generation += 1;
    this.snapshot = null;
    this.loading = null;
  }

  /** The snapshot, read once; null while a change is under way (then the database decides). */
  private current(): Promise<Snapshot | null> | Snapshot | null {
    if (!this.enabled || this.changes > 0) return null;
    if (this.snapshot) return this.snapshot;
    if (this.loading) return this.loading;
    const generation = this.generation;
    const loading = wantingMoreEverywhere(this.db.kysely).then(
      (rows) => {
        if (generation !== this.generation || this.changes > 0) return null;
        this.snapshot = { accounts: new Set(rows.accounts), scopes: new Set(rows.scopes) };
        this.loading = null;
        return this.snapshot;
      },
      () => {
        // Read again next time; this question goes to the database.
        if (generation === this.generation) this.loading = null;
        return null;
      },
    );
    this.loading = loading;
    return loading;
  }
}
