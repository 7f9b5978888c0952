import { iso } from '../../lib/iso-time.js';
import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { MessageTable } from '../../db/tables/messages.js';
import { conflict, forbidden, validation } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { toRow, emitConversationEvent } from '../conversations/index.js';
import { deferMessageTerms, messageTerms } from '../search/index.js';

import type { MessageCore } from './message-core.js';
import { insertEdit, replaceText } from './queries.js';
import { checkText } from './text.js';
import type { MessageView } from './views.js';

/** Changing sent messages: the author's edits, and deletion by the author or staff. */
export class MessageChanges {
  constructor(private readonly core: MessageCore) {}

  /** The author changes their text; the earlier text goes to the edit history. */
  async edit(actor: Actor, messageId: unknown, textInput: unknown): Promise<MessageView> {
    const accountId = actingAccountId(actor);
    const text = checkText(
      textInput,
      this.core.deps.config.messageBytesMax,
      this.core.deps.config.limits.messageBytes === null,
    );
    const { message, access } = await this.core.messageFor(accountId, messageId, 'write');
    if (message.authorId !== accountId) throw forbidden('only the author can edit a message');
    if (message.deletedAt !== null) throw conflict('the message was deleted');
    if (message.text === null) throw validation('an encrypted message cannot be edited here');
    if (message.text === text) return message;
    const previous = message.text;
    const mentions = await this.core.resolveMentions(access, accountId, text);
    const now = this.core.now();
    const conv = toRow(access.row);
    const terms = await messageTerms(this.core.kysely, text, accountId, message.workspaceId);
    await this.core.deps.db.transaction(async (tx) => {
      this.core.deps.pages.changing(tx, conv.id);
      await insertEdit(tx.db, {
        id: newId(),
        messageId: message.id,
        previousText: previous,
        editedAt: now,
        editorId: accountId,
      });
      // Only over the text this edit saw: a concurrent edit or delete makes it a CONFLICT, and
      // the history row above rolls back with it.
      const replaced = await replaceText(tx.db, message.id, previous, {
        text,
        editedAt: now,
        mentions: JSON.stringify(mentions),
      });
      if (!replaced) {
        throw conflict('the message was changed or deleted meanwhile; reload it and try again');
      }
      // Held as a send's are, so an edit in the send's own group comes after it.
      await deferMessageTerms(tx, message, terms);
      emitConversationEvent(
        tx,
        this.core.deps.events,
        conv,
        await this.core.recipients(tx, conv),
        'MessageEdited',
        now,
        {
          messageId: message.id,
          text,
          editedAt: iso(now),
          mentions,
        },
      );
    });
    const edited = { ...message, text, editedAt: now, mentions: JSON.stringify(mentions) };
    this.core.hooks.edited(edited);
    return edited;
  }

  /**
   * Deletes a message: its author, or a Moderator or the owner of its workspace. The row stays
   * (replies stay under it) without text, ciphertext, mentions, edit history, reactions or pin
   * (`removal.ts`, the one removal path).
   */
  async delete(actor: Actor, messageId: unknown): Promise<MessageView> {
    const accountId = actingAccountId(actor);
    const { message, access } = await this.core.messageFor(accountId, messageId, 'write', (m) =>
      m.authorId === accountId ? 'message:post' : 'message:deleteAny',
    );
    const own = message.authorId === accountId;
    if (!own && access.row.kind !== 'channel') {
      throw forbidden('only the author can delete a message here');
    }
    if (message.deletedAt !== null) return message;
    const now = this.core.now();
    const deleted: MessageTable = {
      ...message,
      text: null,
      ciphertext: null,
      mentions: null,
      deletedAt: now,
      deletedBy: accountId,
    };
    await this.core.deps.db.transaction((tx) =>
      this.core.deps.removal.remove(tx, [message.id], { at: now, by: accountId }),
    );
    return deleted;
  }
}
