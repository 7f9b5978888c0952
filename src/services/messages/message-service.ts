import type { Actor } from '../../auth/actor.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import type { EventFields } from '../../events/catalog.js';

import { MessageChanges } from './changes.js';
import type { MessageHooks } from './hooks.js';
import { MessageCore, type MessageServiceDeps } from './message-core.js';
import { findMessage } from './queries.js';
import type { MessageRateLimiter } from './rate-limit.js';
import { ReactionsAndPins } from './reactions-pins.js';
import { MessageReading } from './reading.js';
import type { NewestPages } from './newest-pages.js';
import type { MessageRemover } from './removal.js';
import { MessageSending } from './sending.js';

export type { MessageServiceDeps };

/**
 * Messages: sending, replies, forwards, edits, deletion, reactions, pins, read markers and pages
 * (docs/messages.md). Its parts, along the area's seams, are its surface (as the command
 * system's and moderation's are): `sending` (`sending.ts`), `changes` (`changes.ts`),
 * `reactions` (`reactions-pins.ts`) and `reading` (`reading.ts`), over the access checks of
 * `message-core.ts`.
 */
export class MessageService {
  readonly rate: MessageRateLimiter;
  /** The one removal path; areas register their clean-up with `removal.onRemove`. */
  readonly removal: MessageRemover;
  /** After-commit hooks on new and edited text; areas register with `hooks.onCreated`. */
  readonly hooks: MessageHooks;
  /** The newest page of each conversation kept in memory (newest-pages.ts). */
  readonly pages: NewestPages;

  /** Sends, replies, forwards, and encrypted messages for the MLS area (which adds its checks). */
  readonly sending: MessageSending;
  /** Edits and deletion. */
  readonly changes: MessageChanges;
  /** Reactions and pins. */
  readonly reactions: ReactionsAndPins;
  /** Read markers, pages, threads, pins, reactions and edit history. */
  readonly reading: MessageReading;
  /** Events other areas raise about a message (attachments finalized onto it). */
  readonly announce: MessageCore['announce'] = (...args) => this.core.announce(...args);

  private readonly core: MessageCore;

  constructor(deps: MessageServiceDeps) {
    this.core = new MessageCore(deps);
    this.rate = this.core.rate;
    this.removal = deps.removal;
    this.hooks = this.core.hooks;
    this.pages = deps.pages;
    // Sends spend the rate through `takeMessageRate` here, the one place every kind of message
    // (the e2ee area's too) passes.
    this.sending = new MessageSending(this.core, (actor) => this.takeMessageRate(actor));
    this.changes = new MessageChanges(this.core);
    this.reactions = new ReactionsAndPins(this.core);
    this.reading = new MessageReading(this.core);
  }

  /**
   * Spends one message of the account's rate (RATE_LIMITED with retryAfterSeconds past it).
   * Every kind of message calls it: sends, replies, forwards, and encrypted messages (the e2ee
   * area calls it before storing one).
   */
  takeMessageRate(actor: Actor): Promise<void> {
    return this.core.takeMessageRate(actor);
  }

  /**
   * Announces `MessageUpdated` (docs/events.md) for fields another area keeps about a message
   * (its link previews), to whoever sees the message, after `tx` commits. Nothing is announced,
   * and false returned, when the message is gone, deleted, or no longer `current` (its text
   * changed since the caller read it): the caller then writes nothing either.
   */
  async announceUpdate(
    tx: Tx,
    messageId: string,
    at: number,
    fields: Omit<EventFields['MessageUpdated'], 'messageId'>,
    current: (message: MessageTable) => boolean = () => true,
  ): Promise<boolean> {
    const message = await findMessage(tx.db, messageId);
    if (!message || message.deletedAt !== null || !current(message)) return false;
    await this.core.announce(tx, message.conversationId, 'MessageUpdated', at, {
      messageId,
      ...fields,
    });
    return true;
  }
}
