import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import { Lru } from '../../lib/lru.js';

/** Conversations whose newest pages are kept. */
const MAX_CONVERSATIONS = 5_000;
/** Longest a page is kept however quiet: a bound for a change made behind the server's back. */
const TTL_MS = 60_000;

interface Kept {
  /** Newest first, as the page query reads them; frozen (shared by every reader). */
  rows: readonly MessageTable[];
  until: number;
}

/**
 * The newest page of each conversation (no cursor), kept in the server's memory while it is the
 * only server process (the in-process event bus: docs/durability.md, "Cached reads"). Opening a
 * channel reads that page, and in a busy workspace many people open the same channels between
 * two messages.
 *
 * Every change of a conversation's messages goes through the messages area, which tells this
 * cache in the changing transaction:
 * - `sending`: a new message. Kept pages stay good while the transaction runs (it is not
 *   committed); once it commits the message joins them in its place.
 * - `changing`: an edit, a deletion, a thread's count. Kept pages go at once and again when the
 *   transaction ends.
 * A read made while a transaction changes the conversation is answered but not kept (on
 * PostgreSQL it runs beside the transaction; on SQLite it waits for it). Changes made by another process (the command line's purge
 * and block cascades) reach the server as the events its outbox drainer publishes: every page goes
 * then (`forgetAll`), within the drainer's second, as the live streams hear of them.
 */
export class NewestPages {
  private readonly pages = new Lru<string, Map<number, Kept>>(MAX_CONVERSATIONS);
  /** Open transactions changing each conversation ('*': every conversation). */
  private readonly open = new Map<string, number>();
  /**
   * Bumped by every committed change of a conversation: a read that started before it is not
   * kept (on PostgreSQL it may have read the conversation as it was before the change).
   */
  private readonly stamps = new Lru<string, number>(MAX_CONVERSATIONS * 4);
  /** Bumped when every page goes. */
  private generation = 0;

  constructor(
    private readonly enabled: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** The conversation's newest `take` messages, newest first, from memory or from `load`. */
  async get(
    conversationId: string,
    take: number,
    load: () => Promise<MessageTable[]>,
  ): Promise<MessageTable[]> {
    if (!this.enabled) return load();
    const kept = this.pages.get(conversationId)?.get(take);
    if (kept && kept.until > this.now()) return kept.rows.slice();
    const generation = this.generation;
    const stamp = this.stamp(conversationId);
    const rows = await load();
    if (
      generation === this.generation &&
      stamp === this.stamp(conversationId) &&
      !this.isOpen(conversationId)
    ) {
      let byTake = this.pages.get(conversationId);
      if (!byTake) {
        byTake = new Map();
        this.pages.set(conversationId, byTake);
      }
      byTake.set(take, {
        rows: rows.map((r) => Object.freeze({ ...r })),
        until: this.now() + TTL_MS,
      });
    }
    return rows;
  }

  /** `tx` adds `message` (a new message, not a reply): it joins kept pages once committed. */
  sending(tx: Tx, message: MessageTable): void {
    if (!this.enabled) return;
    if (message.threadRootId !== null) return;
    const id = message.conversationId;
    this.hold(tx, id);
    const row = Object.freeze({ ...message });
    tx.onCommit(() => {
      this.touch(id);
      const byTake = this.pages.get(id);
      if (!byTake) return;
      for (const [take, kept] of byTake)
        byTake.set(take, { ...kept, rows: withRow(kept.rows, row, take) });
    });
  }

  /**
   * `tx` changes messages of the conversation (of every conversation when omitted): its kept
   * pages go now and once the transaction ends.
   */
  changing(tx: Tx, conversationId?: string): void {
    if (!this.enabled) return;
    const key = conversationId ?? '*';
    this.forget(conversationId);
    this.hold(tx, key);
    tx.onSettled(() => this.forget(conversationId));
  }

  /** Every kept page goes (changes made by another process). */
  forgetAll(): void {
    this.forget(undefined);
  }

  private forget(conversationId: string | undefined): void {
    if (conversationId === undefined) {
      this.generation++;
      this.pages.clear();
    } else {
      this.touch(conversationId);
      this.pages.delete(conversationId);
    }
  }

  private stamp(conversationId: string): number {
    return this.stamps.get(conversationId) ?? 0;
  }

  private touch(conversationId: string): void {
    this.stamps.set(conversationId, this.stamp(conversationId) + 1);
  }

  /** Reads of `key`'s pages are not kept until `tx` ends. */
  private hold(tx: Tx, key: string): void {
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
    tx.onSettled(() => {
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    });
  }

  private isOpen(conversationId: string): boolean {
    return this.open.has(conversationId) || this.open.has('*');
  }
}

/** `rows` (newest first) with `row` in its place by (createdAt, id), still `take` long at most. */
function withRow(
  rows: readonly MessageTable[],
  row: MessageTable,
  take: number,
): readonly MessageTable[] {
  if (rows.some((r) => r.id === row.id)) return rows;
  const at = rows.findIndex((r) => newer(row, r));
  if (at < 0) {
    // Older than every kept row: it belongs on the page only if the page is not full.
    return rows.length < take ? [...rows, row] : rows;
  }
  const next = [...rows.slice(0, at), row, ...rows.slice(at)];
  return next.length > take ? next.slice(0, take) : next;
}

function newer(a: MessageTable, b: MessageTable): boolean {
  return a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);
}
