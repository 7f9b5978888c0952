import type { Logger } from 'pino';

import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { Action } from '../../auth/policy.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { ConversationTable, MessageTable } from '../../db/tables/collaboration.js';
import type { Tx } from '../../db/transaction.js';
import type { EventBus } from '../../events/bus.js';
import { AppError, conflict, forbidden, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AccountService, AccountView } from '../accounts/account-service.js';
import { toAccountView } from '../accounts/account-view.js';
import type { Authz } from '../authz/authz.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import {
  assertReadable,
  assertWritableBy,
  plausibleId,
  type Access,
} from '../conversations/access.js';
import { toRow } from '../conversations/conversation-service.js';
import { emitConversationEvent, emitToUsers, iso } from '../conversations/events.js';
import { cursorOf, parsePageArgs, type Page, type PageArgs } from '../conversations/paging.js';
import {
  advanceReadMarker,
  findConversationAccess,
  membersOf,
  touchConversation,
} from '../conversations/queries.js';

import {
  accountIdsByUsernameKey,
  accountsByIds,
  addReaction,
  bumpThreadRoot,
  countDistinctEmoji,
  countPins,
  deletePin,
  editsOf,
  findMessage,
  findMessagesByIds,
  insertMessage,
  insertPin,
  messagePageQuery,
  pinnedAmong,
  pinnedMessages,
  reactionGroups,
  removeReaction,
  visibleChannelIdsByName,
} from './queries.js';
import { MessageRateLimiter } from './rate-limit.js';
import type { MessageRemover } from './removal.js';
import { checkEmoji, checkText, NO_MENTIONS, parseMentions, type StoredMentions } from './text.js';

/** Pins one conversation may hold (Slack's limit). */
export const MAX_PINS = 100;
/** Different emoji on one message (Discord's limit). */
export const MAX_REACTION_EMOJI = 20;

/**
 * Messages: sending, replies, forwards, edits, deletion, reactions, pins, read markers and pages
 * (docs/messages.md). Every write checks the conversation through `access.ts`: NOT_FOUND for
 * one the caller cannot see, FORBIDDEN for a pending invitee, CONVERSATION_ARCHIVED, TIMED_OUT.
 */
export class MessageService {
  readonly rate: MessageRateLimiter;
  /** The one removal path; areas register their clean-up with `removal.onRemove`. */
  readonly removal: MessageRemover;

  constructor(
    private readonly deps: {
      db: Db;
      bus: EventBus;
      config: Config;
      clock: Clock;
      log: Logger;
      accounts: AccountService;
      removal: MessageRemover;
      authz: Authz;
    },
  ) {
    this.rate = new MessageRateLimiter(deps.config.rates, deps.clock);
    this.removal = deps.removal;
  }

  private get kysely() {
    return this.deps.db.kysely;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /**
   * Spends one message of the account's rate (RATE_LIMITED with retryAfterSeconds past it).
   * Every kind of message calls it: sends, replies, forwards, and encrypted messages (the e2ee
   * area calls it before storing one).
   */
  async takeMessageRate(actor: Actor): Promise<void> {
    const accountId = actingAccountId(actor);
    let onProbation = false;
    const { config } = this.deps;
    if (config.limits.probationHours !== null && config.rates.probationMessagesPerMin !== null) {
      const row = await this.kysely
        .selectFrom('account')
        .select('createdAt')
        .where('id', '=', accountId)
        .executeTakeFirst();
      onProbation = row ? this.deps.accounts.probationEndsAt(row.createdAt) !== null : false;
    }
    this.rate.take(accountId, onProbation);
  }

  private async writable(accountId: string, conversationId: unknown, action?: Action) {
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId);
    return assertWritableBy(row, this.now(), action);
  }

  private async readable(accountId: string, conversationId: unknown): Promise<Access> {
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId);
    return assertReadable(row, this.now());
  }

  /**
   * A message and the caller's access to its conversation; NOT_FOUND when either is hidden.
   * `action` may depend on the message (deleting one's own or another's).
   */
  private async messageFor(
    accountId: string,
    messageId: unknown,
    mode: 'read' | 'write',
    action: Action | ((m: MessageTable) => Action) = 'message:post',
  ): Promise<{ message: MessageTable; access: Access }> {
    if (!plausibleId(messageId)) throw notFound('message');
    const message = await findMessage(this.kysely, messageId);
    if (!message) throw notFound('message');
    const row = await findConversationAccess(this.kysely, message.conversationId, accountId);
    const now = this.now();
    try {
      const access =
        mode === 'read'
          ? assertReadable(row, now)
          : assertWritableBy(row, now, typeof action === 'function' ? action(message) : action);
      return { message, access };
    } catch (err) {
      // A conversation the caller cannot see hides its messages the same way.
      if (err instanceof AppError && err.code === 'NOT_FOUND') throw notFound('message');
      throw err;
    }
  }

  // ---- sending -------------------------------------------------------------------------------

  /** Sends a message, or a reply in a thread: one short transaction. */
  async send(
    actor: Actor,
    input: { conversationId: unknown; text: unknown; threadRootId?: unknown },
  ): Promise<MessageTable> {
    const accountId = actingAccountId(actor);
    const text = checkText(input.text, this.deps.config.messageBytesMax);
    const rootId = input.threadRootId ?? null;
    if (rootId !== null && !plausibleId(rootId)) throw notFound('message');
    const access = await this.writable(accountId, input.conversationId);
    const conv = toRow(access.row);
    if (conv.encrypted === 1) {
      throw validation('this conversation is end-to-end encrypted: send an encrypted message');
    }
    if (rootId !== null) {
      const root = await findMessage(this.kysely, rootId);
      if (!root || root.conversationId !== conv.id) throw notFound('message');
      if (root.threadRootId !== null) {
        throw validation('that message is a reply: reply in the thread of its root message');
      }
    }
    await this.takeMessageRate(actor);
    const mentions = await this.resolveMentions(access, accountId, text);
    const now = this.now();
    const message = newMessageRow(conv, accountId, now, {
      text,
      threadRootId: rootId,
      mentions: JSON.stringify(mentions),
    });
    await this.insert(conv, message);
    return message;
  }

  /** Copies a message's text into another conversation as a new message. */
  async forward(
    actor: Actor,
    messageId: unknown,
    toConversationId: unknown,
  ): Promise<MessageTable> {
    const accountId = actingAccountId(actor);
    const { message: source, access: from } = await this.messageFor(accountId, messageId, 'read');
    if (source.deletedAt !== null) throw validation('a deleted message cannot be forwarded');
    if (from.row.encrypted === 1 || source.text === null) {
      throw validation('an encrypted message cannot be forwarded by the server');
    }
    const access = await this.writable(accountId, toConversationId);
    const conv = toRow(access.row);
    if (conv.encrypted === 1) {
      throw validation('this conversation is end-to-end encrypted: send an encrypted message');
    }
    await this.takeMessageRate(actor);
    const now = this.now();
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

  private async insert(conv: ConversationTable, message: MessageTable) {
    await this.unlessGone('conversation', this.insertWithin(conv, message));
  }

  /** NOT_FOUND when what a write points at (or its workspace) was deleted after the check. */
  private async unlessGone<T>(what: string, work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (isForeignKeyViolation(err)) throw notFound(what);
      throw err;
    }
  }

  private async insertWithin(conv: ConversationTable, message: MessageTable) {
    await this.deps.db.transaction(async (tx) => {
      if (message.threadRootId !== null) {
        if (!(await bumpThreadRoot(tx.db, message.threadRootId, conv.id, message.createdAt))) {
          throw notFound('thread root message');
        }
      }
      await insertMessage(tx.db, message);
      if (message.threadRootId === null) {
        await touchConversation(tx.db, conv.id, message.createdAt);
        // One's own message is read: sending moves the sender's marker, as in Slack.
        await advanceReadMarker(tx.db, conv.id, message.authorId, message.createdAt, message.id);
      }
      const recipients = await this.recipients(tx, conv);
      emitConversationEvent(
        tx,
        this.deps.bus,
        conv,
        recipients,
        'MessageCreated',
        message.createdAt,
        {
          message: messagePayload(message),
        },
      );
    });
  }

  /** Members of a direct-space conversation (whose user topics get its events); none for channels. */
  private async recipients(tx: Tx | null, conv: ConversationTable): Promise<string[]> {
    if (conv.kind === 'channel') return [];
    const rows = await membersOf(tx ? tx.db : this.kysely, [conv.id], this.now());
    return rows.filter((r) => r.state === 'member').map((r) => r.accountId);
  }

  /** Looks up `@username` and `#channel` mentions (at most two queries, none without any). */
  private async resolveMentions(
    access: Access,
    accountId: string,
    text: string,
  ): Promise<StoredMentions> {
    const parsed = parseMentions(text);
    const users = await accountIdsByUsernameKey(this.kysely, parsed.usernames);
    const channels =
      access.row.kind === 'channel'
        ? await visibleChannelIdsByName(
            this.kysely,
            access.row.workspaceId,
            accountId,
            parsed.channels,
            access.role === 'guest',
          )
        : [];
    return { users, channels, here: parsed.here };
  }

  // ---- changing ------------------------------------------------------------------------------

  /** The author changes their text; the earlier text goes to the edit history. */
  async edit(actor: Actor, messageId: unknown, textInput: unknown): Promise<MessageTable> {
    const accountId = actingAccountId(actor);
    const text = checkText(textInput, this.deps.config.messageBytesMax);
    const { message, access } = await this.messageFor(accountId, messageId, 'write');
    if (message.authorId !== accountId) throw forbidden('only the author can edit a message');
    if (message.deletedAt !== null) throw conflict('the message was deleted');
    if (message.text === null) throw validation('an encrypted message cannot be edited here');
    if (message.text === text) return message;
    const previous = message.text;
    const mentions = await this.resolveMentions(access, accountId, text);
    const now = this.now();
    const conv = toRow(access.row);
    await this.deps.db.transaction(async (tx) => {
      await tx.db
        .insertInto('message_edit')
        .values({
          id: newId(),
          messageId: message.id,
          previousText: previous,
          editedAt: now,
          editorId: accountId,
        })
        .execute();
      // Only over the text this edit saw: a concurrent edit or delete makes it a CONFLICT, and
      // the history row above rolls back with it.
      const res = await tx.db
        .updateTable('message')
        .set({ text, editedAt: now, mentions: JSON.stringify(mentions) })
        .where('id', '=', message.id)
        .where('text', '=', previous)
        .where('deletedAt', 'is', null)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) {
        throw conflict('the message was changed or deleted meanwhile; reload it and try again');
      }
      emitConversationEvent(
        tx,
        this.deps.bus,
        conv,
        await this.recipients(tx, conv),
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
    return { ...message, text, editedAt: now, mentions: JSON.stringify(mentions) };
  }

  /**
   * Deletes a message: its author, or a Moderator or the owner of its workspace. The row stays
   * (replies stay under it) without text, ciphertext, mentions, edit history, reactions or pin
   * (`removal.ts`, the one removal path).
   */
  async delete(actor: Actor, messageId: unknown): Promise<MessageTable> {
    const accountId = actingAccountId(actor);
    const { message, access } = await this.messageFor(accountId, messageId, 'write', (m) =>
      m.authorId === accountId ? 'message:post' : 'message:deleteAny',
    );
    const own = message.authorId === accountId;
    if (!own && access.row.kind !== 'channel') {
      throw forbidden('only the author can delete a message here');
    }
    if (message.deletedAt !== null) return message;
    const now = this.now();
    const deleted: MessageTable = {
      ...message,
      text: null,
      ciphertext: null,
      mentions: null,
      deletedAt: now,
      deletedBy: accountId,
    };
    await this.deps.db.transaction((tx) =>
      this.deps.removal.remove(tx, [message.id], { at: now, by: accountId }),
    );
    return deleted;
  }

  // ---- reactions and pins --------------------------------------------------------------------

  async addReaction(actor: Actor, messageId: unknown, emojiInput: unknown) {
    const accountId = actingAccountId(actor);
    const emoji = checkEmoji(emojiInput);
    const { message, access } = await this.messageFor(
      accountId,
      messageId,
      'write',
      'message:react',
    );
    if (message.deletedAt !== null) throw conflict('the message was deleted');
    const now = this.now();
    const conv = toRow(access.row);
    await this.unlessGone(
      'message',
      this.deps.db.transaction(async (tx) => {
        await this.assertStillLive(tx, message.id);
        if (!(await addReaction(tx.db, message.id, accountId, emoji, now))) return;
        if ((await countDistinctEmoji(tx.db, message.id)) > MAX_REACTION_EMOJI) {
          throw validation(`a message takes at most ${MAX_REACTION_EMOJI} different emoji`);
        }
        emitConversationEvent(
          tx,
          this.deps.bus,
          conv,
          await this.recipients(tx, conv),
          'ReactionAdded',
          now,
          {
            messageId: message.id,
            emoji,
            userId: accountId,
          },
        );
      }),
    );
    return message;
  }

  /**
   * Re-reads the message inside the write's transaction. On PostgreSQL the row is locked FOR
   * SHARE, so a concurrent delete either commits first (and is seen here) or waits for this
   * write; without it a reaction or pin could land on a message just deleted. SQLite runs one
   * writer at a time.
   */
  private async assertStillLive(tx: Tx, messageId: string): Promise<void> {
    let query = tx.db.selectFrom('message').select('deletedAt').where('id', '=', messageId);
    if (this.deps.db.dialect === 'postgres') query = query.forShare();
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('message');
    if (row.deletedAt !== null) throw conflict('the message was deleted');
  }

  async removeReaction(actor: Actor, messageId: unknown, emojiInput: unknown) {
    const accountId = actingAccountId(actor);
    const emoji = checkEmoji(emojiInput);
    const { message, access } = await this.messageFor(
      accountId,
      messageId,
      'write',
      'message:react',
    );
    const now = this.now();
    const conv = toRow(access.row);
    await this.deps.db.transaction(async (tx) => {
      if (!(await removeReaction(tx.db, message.id, accountId, emoji))) return;
      emitConversationEvent(
        tx,
        this.deps.bus,
        conv,
        await this.recipients(tx, conv),
        'ReactionRemoved',
        now,
        {
          messageId: message.id,
          emoji,
          userId: accountId,
        },
      );
    });
    return message;
  }

  async pin(actor: Actor, messageId: unknown) {
    const accountId = actingAccountId(actor);
    const { message, access } = await this.messageFor(accountId, messageId, 'write', 'message:pin');
    if (message.deletedAt !== null) throw conflict('the message was deleted');
    const now = this.now();
    const conv = toRow(access.row);
    await this.unlessGone(
      'message',
      this.deps.db.transaction(async (tx) => {
        await this.assertStillLive(tx, message.id);
        if ((await countPins(tx.db, conv.id)) >= MAX_PINS) {
          throw validation(`a conversation holds at most ${MAX_PINS} pinned messages`);
        }
        if (!(await insertPin(tx.db, conv.id, message.id, accountId, now))) return;
        emitConversationEvent(
          tx,
          this.deps.bus,
          conv,
          await this.recipients(tx, conv),
          'MessagePinned',
          now,
          {
            messageId: message.id,
            pinnedBy: accountId,
            pinnedAt: iso(now),
          },
        );
      }),
    );
    return message;
  }

  async unpin(actor: Actor, messageId: unknown) {
    const accountId = actingAccountId(actor);
    const { message, access } = await this.messageFor(accountId, messageId, 'write', 'message:pin');
    const now = this.now();
    const conv = toRow(access.row);
    await this.deps.db.transaction(async (tx) => {
      if (!(await deletePin(tx.db, conv.id, message.id))) return;
      emitConversationEvent(
        tx,
        this.deps.bus,
        conv,
        await this.recipients(tx, conv),
        'MessageUnpinned',
        now,
        {
          messageId: message.id,
          unpinnedBy: accountId,
        },
      );
    });
    return message;
  }

  // ---- read markers --------------------------------------------------------------------------

  /** Moves the caller's read marker forward to a message of the conversation (never back). */
  async markRead(
    actor: Actor,
    conversationId: unknown,
    messageId: unknown,
  ): Promise<ConversationTable> {
    const accountId = actingAccountId(actor);
    const access = await this.readable(accountId, conversationId);
    if (!access.isMember) throw forbidden('join the channel first');
    const conv = toRow(access.row);
    if (!plausibleId(messageId)) throw notFound('message');
    const message = await findMessage(this.kysely, messageId);
    if (!message || message.conversationId !== conv.id) throw notFound('message');
    const now = this.now();
    await this.deps.db.transaction(async (tx) => {
      if (!(await advanceReadMarker(tx.db, conv.id, accountId, message.createdAt, message.id))) {
        return;
      }
      emitToUsers(tx, this.deps.bus, conv, [accountId], 'ReadMarkerUpdated', now, {
        userId: accountId,
        messageId: message.id,
        readAt: iso(message.createdAt),
      });
    });
    return conv;
  }

  // ---- reading -------------------------------------------------------------------------------

  /** A page of a conversation's messages (thread replies excluded), oldest first. */
  async page(actor: Actor, conversationId: unknown, args: PageArgs): Promise<Page<MessageTable>> {
    const accountId = actingAccountId(actor);
    const parsed = parsePageArgs(args);
    const access = await this.readable(accountId, conversationId);
    return this.readPage({ conversationId: access.row.id, threadRootId: null }, parsed);
  }

  /** A page of the replies in a message's thread, oldest first. */
  async threadPage(actor: Actor, messageId: unknown, args: PageArgs) {
    const accountId = actingAccountId(actor);
    const parsed = parsePageArgs(args);
    const { message } = await this.messageFor(accountId, messageId, 'read');
    if (message.threadRootId !== null) {
      throw validation('this message is a reply; read the thread of its root message');
    }
    return this.readPage(
      { conversationId: message.conversationId, threadRootId: message.id },
      parsed,
    );
  }

  private async readPage(
    where: { conversationId: string; threadRootId: string | null },
    parsed: ReturnType<typeof parsePageArgs>,
  ): Promise<Page<MessageTable>> {
    const { before, after, limit } = parsed;
    const rows = await messagePageQuery(this.kysely, {
      ...where,
      before,
      after,
      take: limit + 1,
    }).execute();
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    // Pages always read oldest first; the query walked newest first unless going forward.
    if (!after) page.reverse();
    const first = page[0];
    const last = page[page.length - 1];
    const cur = (m: MessageTable | undefined) => (m ? cursorOf(m.createdAt, m.id) : null);
    if (after) {
      // Toward newer messages there is always a cursor to come back with: more may arrive.
      return {
        items: page,
        hasMore: more,
        nextCursor: cur(last) ?? args_(after),
        prevCursor: cur(first),
      };
    }
    return {
      items: page,
      hasMore: more,
      nextCursor: more ? cur(first) : null,
      prevCursor: cur(last),
    };
  }

  /** Pinned messages of a conversation, most recently pinned first. */
  async pinned(actor: Actor, conversationId: unknown): Promise<MessageTable[]> {
    const accountId = actingAccountId(actor);
    const access = await this.readable(accountId, conversationId);
    return pinnedMessages(this.kysely, access.row.id, MAX_PINS);
  }

  // ---- batch reads for a page's fields (one query per kind per page) -------------------------

  reactionGroups(actor: Actor, messageIds: readonly string[]) {
    const accountId = actingAccountId(actor);
    return reactionGroups(this.kysely, accountId, messageIds);
  }

  pinnedAmong(messageIds: readonly string[]) {
    return pinnedAmong(this.kysely, messageIds);
  }

  editsOf(messageIds: readonly string[]) {
    return editsOf(this.kysely, messageIds);
  }

  messagesByIds(ids: readonly string[]) {
    return findMessagesByIds(this.kysely, ids);
  }

  /** Users by id as the User type takes them; a purged account is left out. */
  async accountsByIds(ids: readonly string[]): Promise<AccountView[]> {
    const rows = await accountsByIds(this.kysely, ids);
    return rows.filter((r) => r.deletedAt === null).map(toAccountView);
  }

  /**
   * Whether the actor may read edit histories in a workspace (its Moderators and owner); the
   * role is read once per request however many messages ask.
   */
  mayViewEditHistory(actor: Actor, workspaceId: string): Promise<boolean> {
    return this.deps.authz.can(actor, 'message:viewEditHistory', { workspaceId });
  }
}

const args_ = (pos: { at: number; id: string }) => cursorOf(pos.at, pos.id);

/** The message fields events carry (docs/events.md). */
export function messagePayload(m: MessageTable) {
  return {
    id: m.id,
    conversationId: m.conversationId,
    serverId: m.workspaceId,
    authorId: m.authorId,
    text: m.deletedAt === null ? m.text : null,
    threadRootId: m.threadRootId,
    forwardedFromId: m.forwardedFromId,
    createdAt: iso(m.createdAt),
    editedAt: iso(m.editedAt),
    mentions: m.mentions ? (JSON.parse(m.mentions) as StoredMentions) : NO_MENTIONS,
  };
}

/** A new message row of `conv` by `authorId`; `fields` sets what differs between kinds. */
function newMessageRow(
  conv: ConversationTable,
  authorId: string,
  now: number,
  fields: Pick<MessageTable, 'text' | 'mentions'> &
    Partial<Pick<MessageTable, 'threadRootId' | 'forwardedFromId'>>,
): MessageTable {
  return {
    id: newId(),
    conversationId: conv.id,
    workspaceId: conv.workspaceId,
    authorId,
    ciphertext: null,
    threadRootId: null,
    forwardedFromId: null,
    createdAt: now,
    editedAt: null,
    deletedAt: null,
    deletedBy: null,
    replyCount: 0,
    lastReplyAt: null,
    ...fields,
  };
}
