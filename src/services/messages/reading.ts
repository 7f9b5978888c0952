import { iso } from '../../lib/iso-time.js';
import { actingAccountId, type Actor } from '../../auth/actor.js';
import { forbidden, notFound, validation } from '../../errors.js';
import type { AccountView } from '../accounts/index.js';
import {
  plausibleId,
  prefetchedAccessOf,
  lastMessages,
  toConversationView,
  toRow,
  eventsToUsers,
  cursorOf,
  parsePageArgs,
  advanceReadMarkerStatement,
  type ConversationView,
  type Page,
  type PageArgs,
} from '../conversations/index.js';

import { MarkerMoves, markerMayMove } from './marker-moves.js';
import type { MessageCore } from './message-core.js';
import {
  editsOf,
  findMessage,
  findMessagesByIds,
  messagePageQuery,
  pinnedAmong,
  pinnedMessages,
  reactionGroups,
} from './queries.js';
import { MAX_PINS } from './reactions-pins.js';
import type { MessageEditView, MessageView } from './views.js';

/** Reading: read markers, pages of a conversation and a thread, pins, and a page's fields. */
export class MessageReading {
  /** Moves of read markers under way, one per person and conversation (marker-moves.ts). */
  readonly markerMoves = new MarkerMoves();

  constructor(private readonly core: MessageCore) {}

  /**
   * Moves the caller's read marker forward to a message of the conversation (never back). A
   * marker already at or past the message, as the access read of this request found it, is
   * left without a write; a move of the same marker under way is joined (marker-moves.ts).
   */
  async markRead(
    actor: Actor,
    conversationId: unknown,
    messageId: unknown,
  ): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    const access = await this.core.readable(
      accountId,
      conversationId,
      prefetchedAccessOf(this.core.deps.authz, actor),
    );
    if (!access.isMember) throw forbidden('join the channel first');
    const conv = toRow(access.row);
    if (!plausibleId(messageId)) throw notFound('message');
    const message = await findMessage(this.core.kysely, messageId);
    if (!message || message.conversationId !== conv.id) throw notFound('message');
    const to = { at: message.createdAt, id: message.id };
    if (!markerMayMove(access.row.lastReadAt, access.row.lastReadMessageId, to)) {
      return toConversationView(conv);
    }
    await this.markerMoves.move(`${conv.id} ${accountId}`, to, () => {
      const [event] = eventsToUsers(conv, [accountId], 'ReadMarkerUpdated', this.core.now(), {
        userId: accountId,
        messageId: message.id,
        readAt: iso(message.createdAt),
      });
      // The event only when the marker moved: one statement on PostgreSQL.
      return this.core.deps.events.publishIfChanged(
        advanceReadMarkerStatement(
          this.core.kysely,
          conv.id,
          accountId,
          message.createdAt,
          message.id,
        ),
        event!,
      );
    });
    return toConversationView(conv);
  }

  /** A page of a conversation's messages (thread replies excluded), oldest first. */
  async page(actor: Actor, conversationId: unknown, args: PageArgs): Promise<Page<MessageView>> {
    const accountId = actingAccountId(actor);
    const parsed = parsePageArgs(args);
    const access = await this.core.readable(
      accountId,
      conversationId,
      prefetchedAccessOf(this.core.deps.authz, actor),
    );
    return this.readPage({ conversationId: access.row.id, threadRootId: null }, parsed);
  }

  /** A page of the replies in a message's thread, oldest first. */
  async threadPage(actor: Actor, messageId: unknown, args: PageArgs): Promise<Page<MessageView>> {
    const accountId = actingAccountId(actor);
    const parsed = parsePageArgs(args);
    const { message } = await this.core.messageFor(accountId, messageId, 'read');
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
  ): Promise<Page<MessageView>> {
    const { before, after, limit } = parsed;
    const read = () =>
      this.core.kysely
        .executeQuery(
          messagePageQuery(this.core.kysely, { ...where, before, after, take: limit + 1 }),
        )
        .then((r) => r.rows);
    const rows =
      !before && !after && where.threadRootId === null
        ? await this.core.deps.pages.get(where.conversationId, limit + 1, read)
        : await read();
    const more = rows.length > limit;
    const page = rows.slice(0, limit);
    // Pages always read oldest first; the query walked newest first unless going forward.
    if (!after) page.reverse();
    const first = page[0];
    const last = page[page.length - 1];
    const cur = (m: MessageView | undefined) => (m ? cursorOf(m.createdAt, m.id) : null);
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
  async pinned(actor: Actor, conversationId: unknown): Promise<MessageView[]> {
    const accountId = actingAccountId(actor);
    const access = await this.core.readable(
      accountId,
      conversationId,
      prefetchedAccessOf(this.core.deps.authz, actor),
    );
    return pinnedMessages(this.core.kysely, access.row.id, MAX_PINS);
  }

  reactionGroups(actor: Actor, messageIds: readonly string[]) {
    const accountId = actingAccountId(actor);
    return reactionGroups(this.core.kysely, accountId, messageIds);
  }

  pinnedAmong(messageIds: readonly string[]) {
    return pinnedAmong(this.core.kysely, messageIds);
  }

  editsOf(messageIds: readonly string[]): Promise<MessageEditView[]> {
    return editsOf(this.core.kysely, messageIds);
  }

  messagesByIds(ids: readonly string[]): Promise<MessageView[]> {
    return findMessagesByIds(this.core.kysely, ids);
  }

  /** The newest top-level message of each conversation (`Conversation.lastMessage`). */
  lastMessages(conversationIds: readonly string[]): Promise<MessageView[]> {
    return lastMessages(this.core.kysely, conversationIds);
  }

  /** Users by id as the User type takes them; a purged account is left out. */
  accountsByIds(ids: readonly string[]): Promise<AccountView[]> {
    return this.core.deps.accounts.views.byIds(ids);
  }

  /**
   * Whether the actor may read edit histories in a workspace (its Moderators and owner); the
   * role is read once per request however many messages ask.
   */
  mayViewEditHistory(actor: Actor, workspaceId: string): Promise<boolean> {
    return this.core.deps.authz.can(actor, 'message:viewEditHistory', { workspaceId });
  }
}

const args_ = (pos: { at: number; id: string }) => cursorOf(pos.at, pos.id);
