import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import { notFound, validation } from '../../errors.js';
import {
  plausibleId,
  prefetchedAccessOf,
  toRow,
  emitConversationEvent,
  deferAdvanceReadMarker,
  deferTouchConversation,
} from '../conversations/index.js';
import { messageTerms } from '../search/index.js';

import type { MessageCore } from './message-core.js';
import { messagePayload, newMessageRow } from './message-rows.js';
import { bumpThreadRoot, deferInsertMessage, findMessage, insertMessage } from './queries.js';
import type { MessageView } from './views.js';
import { checkText, NO_MENTIONS } from './text.js';

/** Bytes an encrypted message's ciphertext may exceed SVC_LIMIT_MESSAGE_BYTES by (contract). */
export const ENCRYPTION_FRAMING_BYTES = 4096;

/** What the encryption area adds to sending an encrypted message (services/mls). */
export interface EncryptedSendPort {
  /** Checks before the message rate is spent (group, epoch, pending removals). */
  before(conv: ConversationTable): Promise<void>;
  /** Inside the storing transaction, after the message row: checks again, writes its own row, and
   * answers fields added to the message of `MessageCreated`. */
  within(tx: Tx, message: MessageTable): Promise<Record<string, unknown>>;
}

/** Sending: new messages, thread replies and forwards, each one short transaction. */
export class MessageSending {
  constructor(
    private readonly core: MessageCore,
    /** Spends the sender's message rate (MessageService.takeMessageRate). */
    private readonly takeRate: (actor: Actor) => Promise<void>,
  ) {}

  /**
   * Sends a message, or a reply in a thread: one short transaction. `withFiles`: files will be
   * attached to it (sendMessage with attachmentIds), so its text may be empty.
   */
  async send(
    actor: Actor,
    input: { conversationId: unknown; text: unknown; threadRootId?: unknown },
    withFiles = false,
  ): Promise<MessageView> {
    const accountId = actingAccountId(actor);
    const text = checkText(
      input.text,
      this.core.deps.config.messageBytesMax,
      this.core.deps.config.limits.messageBytes === null,
      withFiles,
    );
    const { rootId, access, conv } = await this.target(actor, accountId, input, false);
    await this.checkRoot(conv, rootId);
    await this.takeRate(actor);
    const mentions = await this.core.resolveMentions(access, accountId, text);
    const now = this.core.now();
    const message = newMessageRow(conv, accountId, now, {
      text,
      threadRootId: rootId,
      mentions: JSON.stringify(mentions),
    });
    await this.insert(conv, message);
    return message;
  }

  /** Copies a message's text into another conversation as a new message. */
  async forward(actor: Actor, messageId: unknown, toConversationId: unknown): Promise<MessageView> {
    const accountId = actingAccountId(actor);
    const { message: source, access: from } = await this.core.messageFor(
      accountId,
      messageId,
      'read',
    );
    if (source.deletedAt !== null) throw validation('a deleted message cannot be forwarded');
    if (from.row.encrypted === 1 || source.text === null) {
      throw validation('an encrypted message cannot be forwarded by the server');
    }
    const conv = toRow((await this.core.writable(accountId, toConversationId)).row);
    checkEncryption(conv, false);
    await this.takeRate(actor);
    const now = this.core.now();
    const message = newMessageRow(conv, accountId, now, {
      text: source.text,
      // A forward of a forward points at the original, whose author the text belongs to.
      forwardedFromId: source.forwardedFromId ?? source.id,
      // A forward notifies nobody: its mentions were meant for another audience.
      mentions: JSON.stringify(NO_MENTIONS),
    });
    await this.insert(conv, message);
    return message;
  }

  /**
   * Stores an encrypted message (MLS ciphertext, base64url) through the same path as any message:
   * the access checks, the message rate, the events. `port` adds the encryption area's checks
   * (before the rate is spent, and again inside the transaction) and its own row.
   */
  async sendEncrypted(
    actor: Actor,
    input: { conversationId: unknown; threadRootId?: unknown },
    ciphertext: { text: string; bytes: number },
    port: EncryptedSendPort,
  ): Promise<MessageView> {
    const accountId = actingAccountId(actor);
    const { rootId, conv } = await this.target(actor, accountId, input, true);
    const max = this.core.deps.config.messageBytesMax + ENCRYPTION_FRAMING_BYTES;
    if (ciphertext.bytes > max) {
      throw validation(
        `an encrypted message is at most ${max} bytes (${this.core.deps.config.limits.messageBytes === null ? 'the built-in 65536' : 'SVC_LIMIT_MESSAGE_BYTES'} plus ${ENCRYPTION_FRAMING_BYTES} bytes of framing)`,
      );
    }
    await this.checkRoot(conv, rootId);
    await port.before(conv);
    await this.takeRate(actor);
    const message = newMessageRow(conv, accountId, this.core.now(), {
      text: null,
      threadRootId: rootId,
      mentions: null,
    });
    message.ciphertext = ciphertext.text;
    await this.insert(conv, message, port.within);
    return message;
  }

  /**
   * The conversation a new message or reply goes to: its thread root's id checked for form, the
   * conversation writable by the sender (with the access read ahead of the request when there is
   * one), and encrypted exactly when the message is.
   */
  private async target(
    actor: Actor,
    accountId: string,
    input: { conversationId: unknown; threadRootId?: unknown },
    encrypted: boolean,
  ) {
    const rootId = input.threadRootId ?? null;
    if (rootId !== null && !plausibleId(rootId)) throw notFound('message');
    const access = await this.core.writable(
      accountId,
      input.conversationId,
      undefined,
      prefetchedAccessOf(this.core.deps.authz, actor),
    );
    const conv = toRow(access.row);
    checkEncryption(conv, encrypted);
    return { rootId, access, conv };
  }

  /** A reply's root is a message of the same conversation that is not a reply itself. */
  private async checkRoot(conv: ConversationTable, rootId: string | null) {
    if (rootId === null) return;
    const root = await findMessage(this.core.kysely, rootId);
    if (!root || root.conversationId !== conv.id) throw notFound('message');
    if (root.threadRootId !== null) {
      throw validation('that message is a reply: reply in the thread of its root message');
    }
  }

  private async insert(
    conv: ConversationTable,
    message: MessageTable,
    within?: EncryptedSendPort['within'],
  ) {
    // The search terms are made before the transaction (language detection and stemming are
    // the costly part) and written in it, so an acknowledged message is findable at once; on
    // SQLite's server a short text is held as it is and analyzed with others after the send,
    // before any search (held-terms.ts).
    const later = this.core.deps.heldTerms.takesText(message);
    const terms = later
      ? null
      : await messageTerms(this.core.kysely, message.text, message.authorId, message.workspaceId);
    await this.core.unlessGone('conversation', this.insertWithin(conv, message, terms, within));
  }

  /** `terms` null: the text is held for its analysis (`HeldTerms.takesText`). */
  private async insertWithin(
    conv: ConversationTable,
    message: MessageTable,
    terms: string[] | null,
    within?: EncryptedSendPort['within'],
  ) {
    await this.core.deps.db.transaction(async (tx) => {
      // Before the writes: a page read meanwhile is not kept (docs/durability.md).
      if (message.threadRootId !== null) this.core.deps.pages.changing(tx, conv.id);
      else this.core.deps.pages.sending(tx, message);
      if (message.threadRootId !== null) {
        if (!(await bumpThreadRoot(tx.db, message.threadRootId, conv.id, message.createdAt))) {
          throw notFound('thread root message');
        }
      }
      if (within) {
        // Encrypted: the encryption area's row refers to this one and its checks read the
        // group, so the message row goes first, as it is.
        await insertMessage(tx.db, message);
      } else {
        // The writes go as one statement on PostgreSQL (tx.defer): a send in a channel is then
        // one round trip with its event's outbox row, without BEGIN and COMMIT.
        await deferInsertMessage(tx, message);
      }
      const extra = within ? await within(tx, message) : {};
      if (terms === null) this.core.deps.heldTerms.newText(tx, message);
      else await this.core.deps.heldTerms.newMessage(tx, message, terms);
      if (message.threadRootId === null) {
        await deferTouchConversation(tx, conv.id, message.createdAt);
        // One's own message is read: sending moves the sender's marker, as in Slack.
        await deferAdvanceReadMarker(tx, conv.id, message.authorId, message.createdAt, message.id);
      }
      const recipients = await this.core.recipients(tx, conv);
      emitConversationEvent(
        tx,
        this.core.deps.events,
        conv,
        recipients,
        'MessageCreated',
        message.createdAt,
        {
          message: { ...messagePayload(message), ...extra },
        },
      );
      tx.onCommit(() => this.core.hooks.created(message));
    });
  }
}

/** Plain text goes only to a plain conversation, ciphertext only to an encrypted one. */
function checkEncryption(conv: ConversationTable, encrypted: boolean) {
  if (encrypted && conv.encrypted !== 1) {
    throw validation('this conversation is not encrypted: send its messages with sendMessage');
  }
  if (!encrypted && conv.encrypted === 1) {
    throw validation('this conversation is end-to-end encrypted: send an encrypted message');
  }
}
