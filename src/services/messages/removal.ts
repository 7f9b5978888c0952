import type { Tx } from '../../db/transaction.js';
import type { EventPort } from '../../events/port.js';
import type { NewestPages } from './newest-pages.js';
import { emitConversationEvent, membersOf } from '../conversations/index.js';

import {
  conversationsByIds,
  deleteMessageRows,
  plaintextIdsBy,
  recountThreads,
  rootsWithRepliesOutside,
  tombstoneRows,
  type RemovedMessage,
} from './queries.js';

/** What a removal hook learns: the messages just removed, when, and by whom. */
export interface MessageRemoval {
  readonly messages: readonly RemovedMessage[];
  readonly at: number;
  /** The account (author, moderator, operator, or the purged account itself) or `cli`. */
  readonly by: string;
}

/**
 * An area's clean-up for removed messages (attachments, link previews, search terms, ...). It
 * runs inside the removing transaction while the rows still exist (as tombstones), so a hook
 * may join on them; a hook that throws rolls the whole removal back. Work outside the database
 * (deleting a file) belongs in `tx.onCommit`.
 */
export type MessageRemovalHook = (tx: Tx, removal: MessageRemoval) => Promise<void>;

/** Rows per statement: below SQLite's bound-parameter limit with room to spare. */
const CHUNK = 500;

/**
 * The one way messages leave (docs/messages.md, "Removal"): a person deleting their message, a
 * moderator deleting someone's, a cascading principal block and the account purge all come
 * here, so they agree on what goes: text, ciphertext and mentions are cleared and `deletedAt`
 * set (the row stays, so replies keep their place), the edit history, reactions and pins go,
 * every registered hook runs in the same transaction, and each removed message is announced
 * once with `MessageDeleted` to whoever could see it.
 */
export class MessageRemover {
  private readonly hooks: MessageRemovalHook[] = [];

  constructor(
    private readonly events: EventPort,
    /** Kept newest pages: a removal may touch any conversation's, so all go. */
    private readonly pages: NewestPages,
  ) {}

  /** Registers an area's clean-up; hooks run in registration order. */
  onRemove(hook: MessageRemovalHook): void {
    this.hooks.push(hook);
  }

  /**
   * Tombstones the messages not already deleted and announces them; returns those it removed
   * (a message deleted meanwhile is skipped, so removing twice publishes nothing).
   */
  async remove(
    tx: Tx,
    ids: readonly string[],
    opts: { at: number; by: string },
  ): Promise<RemovedMessage[]> {
    const removed: RemovedMessage[] = [];
    this.pages.changing(tx);
    for (let i = 0; i < ids.length; i += CHUNK) {
      removed.push(...(await tombstoneRows(tx.db, ids.slice(i, i + CHUNK), opts.at, opts.by)));
    }
    if (removed.length === 0) return removed;
    const removal: MessageRemoval = { messages: removed, at: opts.at, by: opts.by };
    for (const hook of this.hooks) await hook(tx, removal);
    await this.announce(tx, removal);
    return removed;
  }

  /**
   * The account purge's part (docs/account-deletion.md): every plaintext message the account
   * wrote is removed; those with no reply left under them then go for good, and the threads
   * that lost replies are recounted. Encrypted messages stay, authored by the tombstone.
   */
  async purgeAuthor(tx: Tx, accountId: string, at: number): Promise<void> {
    const ids = await plaintextIdsBy(tx.db, accountId);
    if (ids.length === 0) return;
    const removed = await this.remove(tx, ids, { at, by: accountId });
    const gone = new Set(ids);
    const kept = new Set<string>();
    for (let i = 0; i < ids.length; i += CHUNK) {
      for (const id of await rootsWithRepliesOutside(tx.db, ids.slice(i, i + CHUNK), accountId)) {
        kept.add(id);
      }
    }
    const erased = ids.filter((id) => !kept.has(id));
    for (let i = 0; i < erased.length; i += CHUNK) {
      await deleteMessageRows(tx.db, erased.slice(i, i + CHUNK));
    }
    const roots = new Set<string>();
    for (const m of removed) {
      if (m.threadRootId !== null && !gone.has(m.threadRootId)) roots.add(m.threadRootId);
    }
    await recountThreads(tx.db, [...roots]);
  }

  private async announce(tx: Tx, removal: MessageRemoval): Promise<void> {
    const convIds = [...new Set(removal.messages.map((m) => m.conversationId))];
    const convs = new Map<string, Awaited<ReturnType<typeof conversationsByIds>>[number]>();
    for (let i = 0; i < convIds.length; i += CHUNK) {
      for (const c of await conversationsByIds(tx.db, convIds.slice(i, i + CHUNK))) {
        convs.set(c.id, c);
      }
    }
    const direct = [...convs.values()].filter((c) => c.kind !== 'channel').map((c) => c.id);
    const recipients = new Map<string, string[]>();
    for (let i = 0; i < direct.length; i += CHUNK) {
      for (const r of await membersOf(tx.db, direct.slice(i, i + CHUNK), removal.at)) {
        if (r.state !== 'member') continue;
        const list = recipients.get(r.conversationId) ?? [];
        list.push(r.accountId);
        recipients.set(r.conversationId, list);
      }
    }
    for (const m of removal.messages) {
      const conv = convs.get(m.conversationId);
      if (!conv) continue;
      emitConversationEvent(
        tx,
        this.events,
        conv,
        recipients.get(conv.id) ?? [],
        'MessageDeleted',
        removal.at,
        { messageId: m.id, threadRootId: m.threadRootId, deletedBy: removal.by },
      );
    }
  }
}
