import type { Logger } from 'pino';

import type { Db } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import type { Clock } from '../../lib/clock.js';

import {
  batchTerms,
  deferNewMessageTerms,
  findHeldMark,
  heldRows,
  heldTextsTerms,
  type HeldText,
  type TermsRow,
  messagesLackingTerms,
  saveHeldMark,
} from './queries.js';

// The index rows of new messages on SQLite, written after their sends are acknowledged
// (docs/search.md, "What is indexed and when"). FTS5 writes an index segment at every commit and
// merges segments as they pile up, about 50 µs a send when each group commit of three or four
// sends writes its own; rows written a few hundred at a time cost FTS5 a third less. So a send
// holds its row here, and a transaction of its own writes the held rows within FLUSH_MS, or as
// soon as BATCH are held, or before any search of this process runs: on SQLite (one process)
// a search always finds what was acknowledged before it. PostgreSQL writes the row with the
// send, in its one statement (queries.ts `deferNewMessageTerms`).
//
// A send's text is held as it is, unanalyzed, where it can be (`takesText`): the analysis of the
// held texts (language detection, stems, compound parts, CJK words) runs at the write, all of
// them in one hop to the analysis thread and back (analyzer.ts), off the event loop and off the
// send's path. The event loop cost a text about 40 µs of analysis between other requests, where
// a run of texts on the thread costs about 12 (docs/search.md, "What is indexed and when"). A
// long text, or one sent while the holding is full, is analyzed before its send as on PostgreSQL
// and its terms held.
//
// A stop before the write loses held rows, never messages: each write of held rows records,
// with them, a time before which every message has its row (`search_backfill` row `held`), and
// the server's start indexes the messages sent since then that have none (`recover`). A send
// holds its row only while its message is less than HOLD_AGE_MS old by the same clock, so a
// message whose row was held after a write was sent at most HOLD_AGE_MS before that write.

/** Longest a held row waits. */
const FLUSH_MS = 250;
/** Held rows that make a write at once. */
const BATCH = 256;
/** Past this many held rows (a write failing), sends write their rows themselves. */
const MOST_HELD = 4096;
/** Longest text held unanalyzed (UTF-16 units): what is held stays a few megabytes at most. */
const HELD_TEXT_MAX = 1000;
/** A row is held only for a message younger than this. */
const HOLD_AGE_MS = 30_000;
/** Messages this long before a write of held rows are searched for missing rows on start. */
const RECOVER_MS = 2 * HOLD_AGE_MS;

/** A held row: its terms, or the text they are made from at the write. */
type Held = TermsRow | (HeldText & { messageId: string });

/** The index rows of new messages held for a later write (SQLite's server process only). */
export class HeldTerms {
  private rows: Held[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private closed = false;

  /**
   * `holding` false (the command line): every send writes its own row, as on PostgreSQL.
   * `waitMs`: how long a held row waits for a write (FLUSH_MS; tests lengthen it).
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly holding: boolean,
    private readonly waitMs = FLUSH_MS,
  ) {}

  /** Held rows not yet written (tests, metrics). */
  get size(): number {
    return this.rows.length;
  }

  /**
   * The index row of a message being sent, in the send's transaction: held for a later write
   * when it can be, else written with the send (`deferNewMessageTerms`). A new message has no row
   * to replace, so no terms (encrypted, no word) write nothing.
   */
  async newMessage(
    tx: Tx,
    message: Pick<MessageTable, 'id' | 'createdAt'>,
    terms: string[],
  ): Promise<void> {
    if (terms.length === 0) return;
    if (!this.holds(message)) return deferNewMessageTerms(tx, message, terms);
    // Held at once: a write of held rows in this group after this send takes it, and one that
    // fails puts it back. Should this send fail, its row names no message and goes nowhere.
    this.rows.push({ messageId: message.id, terms: terms.join(' ') });
    tx.onCommit(() => this.soon());
  }

  /**
   * Whether a send's text may be held unanalyzed (`newText`), to be analyzed at the write: on
   * SQLite's server process, for a young message of a short plaintext, with room to hold it.
   */
  takesText(message: Pick<MessageTable, 'createdAt' | 'text'>): boolean {
    return message.text !== null && message.text.length <= HELD_TEXT_MAX && this.holds(message);
  }

  /**
   * The text of a message being sent, in the send's transaction, held for the write (the send
   * asked `takesText` first): analyzed then, and written unless it has no terms.
   */
  newText(tx: Tx, message: Pick<MessageTable, 'id' | 'text' | 'authorId' | 'workspaceId'>): void {
    this.rows.push({
      messageId: message.id,
      text: message.text ?? '',
      authorId: message.authorId,
      workspaceId: message.workspaceId,
    });
    tx.onCommit(() => this.soon());
  }

  /** Writes every held row now; a search of this process calls it first. */
  async flush(): Promise<void> {
    // A write under way that fails has put its rows back: this one writes them.
    while (this.writing) await this.writing.catch(() => {});
    if (this.rows.length === 0) return;
    this.writing = this.write().finally(() => {
      this.writing = null;
    });
    await this.writing;
  }

  /** Writes what is held and holds no more (the server's close, before the database's). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      await this.flush();
    } catch (err) {
      // The start's `recover` writes them.
      this.log.error({ err }, 'search: held index rows not written at close');
    }
  }

  /**
   * On the server's start (SQLite): index rows for the messages sent since the last write of
   * held rows that have none (held rows a stop lost; messages without words get none again), and
   * the mark moved to now. Returns how many rows were written.
   */
  async recover(): Promise<number> {
    if (this.db.dialect !== 'sqlite') return 0;
    const now = this.clock.now().getTime();
    return this.db.transaction(async (tx) => {
      const mark = await findHeldMark(tx.db);
      let written = 0;
      if (mark !== null) {
        const rows = batchTerms(await messagesLackingTerms(tx.db, mark));
        for (const row of rows) await tx.atGroupEnd({ kind: heldRows, item: row });
        written = rows.length;
      }
      await saveHeldMark(tx.db, now - RECOVER_MS);
      return written;
    });
  }

  /** After a send holding a row commits: a write at once for a full batch, else on the timer. */
  private soon(): void {
    if (this.rows.length >= BATCH) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.writeInBackground();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.writeInBackground();
      }, this.waitMs);
      this.timer.unref();
    }
  }

  private writeInBackground(): void {
    this.flush().catch((err: unknown) => {
      this.log.error({ err }, 'search: held index rows not written; trying again');
      if (!this.closed && !this.timer) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.writeInBackground();
        }, this.waitMs);
        this.timer.unref();
      }
    });
  }

  /**
   * Whether a new message's row may be held: on SQLite's server process while it is open, for a
   * message younger than HOLD_AGE_MS, with room to hold it.
   */
  private holds(message: Pick<MessageTable, 'createdAt'>): boolean {
    return (
      this.holding &&
      !this.closed &&
      this.db.dialect === 'sqlite' &&
      Number(message.createdAt) > this.clock.now().getTime() - HOLD_AGE_MS &&
      this.rows.length < MOST_HELD
    );
  }

  /**
   * The held texts analyzed (all at once), then one transaction: the held rows (in one
   * statement at its group's end) and the mark, a time before which every message has its row.
   * A row held after the rows are taken here belongs to a message younger than HOLD_AGE_MS
   * then, so the mark is RECOVER_MS back, which leaves as much again for the clock's
   * corrections.
   */
  private async write(): Promise<void> {
    const taken = this.rows.splice(0);
    try {
      const rows = await this.termsRows(taken);
      await this.db.transaction(async (tx) => {
        for (const row of rows) await tx.atGroupEnd({ kind: heldRows, item: row });
        await saveHeldMark(tx.db, this.clock.now().getTime() - RECOVER_MS);
      });
    } catch (err) {
      this.rows.unshift(...taken);
      throw err;
    }
  }

  /**
   * The rows to write: held terms as they are, held texts with the terms their analysis gives
   * (none for a text without a word). A text whose analysis throws gets no row, and the error
   * is logged: holding it again would stop every row held after it.
   */
  private async termsRows(taken: Held[]): Promise<TermsRow[]> {
    const texts = taken.filter((row): row is Exclude<Held, TermsRow> => !('terms' in row));
    const made = texts.length > 0 ? await heldTextsTerms(this.db.kysely, texts) : [];
    const rows: TermsRow[] = [];
    let next = 0;
    for (const row of taken) {
      if ('terms' in row) {
        rows.push(row);
        continue;
      }
      // `made` follows the texts in their order among the held rows.
      const terms = made[next++]!;
      if (terms instanceof Error) {
        this.log.error(
          { err: terms, messageId: row.messageId },
          'search: a held text not analyzed',
        );
      } else if (terms.length > 0) {
        rows.push({ messageId: row.messageId, terms: terms.join(' ') });
      }
    }
    return rows;
  }
}
