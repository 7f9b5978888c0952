import type { Actor } from '../../auth/actor.js';
import type { MessageTable } from '../../db/tables/collaboration.js';
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
 * (docs/messages.md). One object for the edges, built from parts along the area's seams:
 * `sending.ts`, `changes.ts`, `reactions-pins.ts` and `reading.ts`, over the access checks of
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

  readonly send: MessageSending['send'];
  readonly forward: MessageSending['forward'];
  /** Encrypted messages, for the MLS area (services/mls), which adds its checks and row. */
  readonly sendEncrypted: MessageSending['sendEncrypted'];
  readonly edit: MessageChanges['edit'];
  readonly delete: MessageChanges['delete'];
  readonly addReaction: ReactionsAndPins['addReaction'];
  readonly removeReaction: ReactionsAndPins['removeReaction'];
  readonly pin: ReactionsAndPins['pin'];
  readonly unpin: ReactionsAndPins['unpin'];
  readonly markRead: MessageReading['markRead'];
  readonly page: MessageReading['page'];
  readonly threadPage: MessageReading['threadPage'];
  readonly pinned: MessageReading['pinned'];
  readonly reactionGroups: MessageReading['reactionGroups'];
  readonly pinnedAmong: MessageReading['pinnedAmong'];
  readonly editsOf: MessageReading['editsOf'];
  readonly messagesByIds: MessageReading['messagesByIds'];
  readonly accountsByIds: MessageReading['accountsByIds'];
  readonly mayViewEditHistory: MessageReading['mayViewEditHistory'];
  /** Events other areas raise about a message (attachments finalized onto it). */
  readonly announce: MessageCore['announce'];

  private readonly core: MessageCore;

  constructor(deps: MessageServiceDeps) {
    this.core = new MessageCore(deps);
    this.rate = this.core.rate;
    this.removal = deps.removal;
    this.announce = this.core.announce.bind(this.core);
    this.hooks = this.core.hooks;
    this.pages = deps.pages;
    // Sends spend the rate through `takeMessageRate` here, the one place every kind of message
    // (the e2ee area's too) passes.
    const sending = new MessageSending(this.core, (actor) => this.takeMessageRate(actor));
    const changes = new MessageChanges(this.core);
    const reactions = new ReactionsAndPins(this.core);
    const reading = new MessageReading(this.core);
    this.send = sending.send.bind(sending);
    this.forward = sending.forward.bind(sending);
    this.sendEncrypted = sending.sendEncrypted.bind(sending);
    this.edit = changes.edit.bind(changes);
    this.delete = changes.delete.bind(changes);
    this.addReaction = reactions.addReaction.bind(reactions);
    this.removeReaction = reactions.removeReaction.bind(reactions);
    this.pin = reactions.pin.bind(reactions);
    this.unpin = reactions.unpin.bind(reactions);
    this.markRead = reading.markRead.bind(reading);
    this.page = reading.page.bind(reading);
    this.threadPage = reading.threadPage.bind(reading);
    this.pinned = reading.pinned.bind(reading);
    this.reactionGroups = reading.reactionGroups.bind(reading);
    this.pinnedAmong = reading.pinnedAmong.bind(reading);
    this.editsOf = reading.editsOf.bind(reading);
    this.messagesByIds = reading.messagesByIds.bind(reading);
    this.accountsByIds = reading.accountsByIds.bind(reading);
    this.mayViewEditHistory = reading.mayViewEditHistory.bind(reading);
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
