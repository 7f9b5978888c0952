import { iso } from '../../lib/iso-time.js';
import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { Tx } from '../../db/transaction.js';
import type { EventFields } from '../../events/catalog.js';
import { conflict, notFound, validation } from '../../errors.js';
import { toRow, emitConversationEvent } from '../conversations/index.js';

import type { MessageCore } from './message-core.js';
import {
  addReaction,
  countDistinctEmoji,
  countPins,
  deletePin,
  insertPin,
  removeReaction,
} from './queries.js';
import { checkEmoji, customEmojiName } from './text.js';
import type { MessageView } from './views.js';

/** Pins one conversation may hold (Slack's limit). */
export const MAX_PINS = 100;
/** Different emoji on one message (Discord's limit). */
export const MAX_REACTION_EMOJI = 20;

/** Reactions and pins: each write re-checks the message inside its transaction. */
export class ReactionsAndPins {
  constructor(private readonly core: MessageCore) {}

  async addReaction(actor: Actor, messageId: unknown, emojiInput: unknown): Promise<MessageView> {
    const emoji = checkEmoji(emojiInput);
    const { accountId, message, access, conv, now } = await this.target(
      actor,
      messageId,
      'message:react',
    );
    if (message.deletedAt !== null) throw conflict('the message was deleted');
    const custom = customEmojiName(emoji);
    if (custom !== null) {
      // A custom emoji must exist in the message's workspace when added; removing one (below)
      // needs only its text, so a reaction outlives its deleted emoji.
      this.core.deps.emoji.assertEnabled();
      if (!(await this.core.deps.emoji.has(access.row.workspaceId, custom))) {
        throw validation(`this workspace has no custom emoji ${emoji}`);
      }
    }
    await this.core.unlessGone(
      'message',
      this.core.deps.db.transaction(async (tx) => {
        await this.assertStillLive(tx, message.id);
        if (!(await addReaction(tx.db, message.id, accountId, emoji, now))) return;
        if ((await countDistinctEmoji(tx.db, message.id)) > MAX_REACTION_EMOJI) {
          throw validation(`a message takes at most ${MAX_REACTION_EMOJI} different emoji`);
        }
        await this.emit(tx, conv, 'ReactionAdded', now, {
          messageId: message.id,
          emoji,
          userId: accountId,
        });
      }),
    );
    return message;
  }

  /** The caller's message to react to or pin, with its conversation, or NOT_FOUND. */
  private async target(actor: Actor, messageId: unknown, action: 'message:react' | 'message:pin') {
    const accountId = actingAccountId(actor);
    const { message, access } = await this.core.messageFor(accountId, messageId, 'write', action);
    return { accountId, message, access, conv: toRow(access.row), now: this.core.now() };
  }

  /** One conversation event to the conversation's recipients, after `tx` commits. */
  private async emit<
    K extends 'ReactionAdded' | 'ReactionRemoved' | 'MessagePinned' | 'MessageUnpinned',
  >(
    tx: Tx,
    conv: ReturnType<typeof toRow>,
    type: K,
    now: number,
    fields: EventFields[K],
  ): Promise<void> {
    emitConversationEvent(
      tx,
      this.core.deps.events,
      conv,
      await this.core.recipients(tx, conv),
      type,
      now,
      fields,
    );
  }

  /**
   * Re-reads the message inside the write's transaction. On PostgreSQL the row is locked FOR
   * SHARE, so a concurrent delete either commits first (and is seen here) or waits for this
   * write; without it a reaction or pin could land on a message just deleted. SQLite runs one
   * writer at a time.
   */
  private async assertStillLive(tx: Tx, messageId: string): Promise<void> {
    let query = tx.db.selectFrom('message').select('deletedAt').where('id', '=', messageId);
    if (this.core.deps.db.dialect === 'postgres') query = query.forShare();
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('message');
    if (row.deletedAt !== null) throw conflict('the message was deleted');
  }

  async removeReaction(
    actor: Actor,
    messageId: unknown,
    emojiInput: unknown,
  ): Promise<MessageView> {
    const emoji = checkEmoji(emojiInput);
    const { accountId, message, conv, now } = await this.target(actor, messageId, 'message:react');
    await this.core.deps.db.transaction(async (tx) => {
      if (!(await removeReaction(tx.db, message.id, accountId, emoji))) return;
      await this.emit(tx, conv, 'ReactionRemoved', now, {
        messageId: message.id,
        emoji,
        userId: accountId,
      });
    });
    return message;
  }

  async pin(actor: Actor, messageId: unknown): Promise<MessageView> {
    const { accountId, message, conv, now } = await this.target(actor, messageId, 'message:pin');
    if (message.deletedAt !== null) throw conflict('the message was deleted');
    await this.core.unlessGone(
      'message',
      this.core.deps.db.transaction(async (tx) => {
        await this.assertStillLive(tx, message.id);
        if ((await countPins(tx.db, conv.id)) >= MAX_PINS) {
          throw validation(`a conversation holds at most ${MAX_PINS} pinned messages`);
        }
        if (!(await insertPin(tx.db, conv.id, message.id, accountId, now))) return;
        await this.emit(tx, conv, 'MessagePinned', now, {
          messageId: message.id,
          pinnedBy: accountId,
          pinnedAt: iso(now),
        });
      }),
    );
    return message;
  }

  async unpin(actor: Actor, messageId: unknown): Promise<MessageView> {
    const { accountId, message, conv, now } = await this.target(actor, messageId, 'message:pin');
    await this.core.deps.db.transaction(async (tx) => {
      if (!(await deletePin(tx.db, conv.id, message.id))) return;
      await this.emit(tx, conv, 'MessageUnpinned', now, {
        messageId: message.id,
        unpinnedBy: accountId,
      });
    });
    return message;
  }
}
