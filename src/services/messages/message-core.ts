import { actingAccountId, type Actor } from '../../auth/actor.js';
import { can, type Action } from '../../auth/policy.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { Tx } from '../../db/transaction.js';
import { AppError, notFound } from '../../errors.js';
import type { EventFields, EventType } from '../../events/catalog.js';
import type { AccountService } from '../accounts/index.js';
import type { AreaDeps } from '../area-deps.js';
import type { Authz } from '../authz/index.js';
import {
  assertReadable,
  assertWritableBy,
  plausibleId,
  emitConversationEvent,
  findConversationAccess,
  membersOf,
  type Access,
  type PrefetchedAccess,
} from '../conversations/index.js';

import {
  accountIdsByUsernameKey,
  conversationsByIds,
  findMessage,
  visibleChannelIdsByName,
} from './queries.js';
import { MessageHooks } from './hooks.js';
import { MessageRateLimiter } from './rate-limit.js';
import type { EmojiLookup } from '../emoji/index.js';
import type { HeldTerms } from '../search/index.js';

import type { NewestPages } from './newest-pages.js';
import type { MessageRemover } from './removal.js';
import { parseMentions, type StoredMentions } from './text.js';

/** What the messages area is built from (build-services.ts). */
export interface MessageServiceDeps extends AreaDeps {
  accounts: AccountService;
  removal: MessageRemover;
  authz: Authz;
  /** Custom emoji for `:name:` reactions (the emoji area's EmojiLookup). */
  emoji: EmojiLookup;
  /** The newest page of each conversation, kept while the server is the only process. */
  pages: NewestPages;
  /** New messages' index rows, held for a write after the send where they can be (search). */
  heldTerms: HeldTerms;
}

/**
 * What every part of the messages area shares: its dependencies, the message rate, and the
 * access checks of `conversations/access.ts` (NOT_FOUND for a conversation the caller cannot
 * see, FORBIDDEN for a pending invitee, CONVERSATION_ARCHIVED, TIMED_OUT), event recipients and
 * mention lookup.
 */
export class MessageCore {
  readonly rate: MessageRateLimiter;
  readonly hooks: MessageHooks;

  constructor(readonly deps: MessageServiceDeps) {
    this.rate = new MessageRateLimiter(deps.config.rates, deps.clock);
    this.hooks = new MessageHooks(deps.log);
  }

  get kysely() {
    return this.deps.db.kysely;
  }

  now(): number {
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

  /** `prefetched`: the access read with the request's session (prefetched-access.ts). */
  async writable(
    accountId: string,
    conversationId: unknown,
    action?: Action,
    prefetched?: PrefetchedAccess,
  ) {
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId, prefetched);
    return assertWritableBy(row, this.now(), action);
  }

  async readable(
    accountId: string,
    conversationId: unknown,
    prefetched?: PrefetchedAccess,
  ): Promise<Access> {
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId, prefetched);
    return assertReadable(row, this.now());
  }

  /**
   * A message and the caller's access to its conversation; NOT_FOUND when either is hidden.
   * `action` may depend on the message (deleting one's own or another's).
   */
  async messageFor(
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

  /** NOT_FOUND when what a write points at (or its workspace) was deleted after the check. */
  async unlessGone<T>(what: string, work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (isForeignKeyViolation(err)) throw notFound(what);
      throw err;
    }
  }

  /** Members of a direct-space conversation (whose user topics get its events); none for channels. */
  async recipients(tx: Tx | null, conv: Pick<ConversationTable, 'id' | 'kind'>): Promise<string[]> {
    if (conv.kind === 'channel') return [];
    const rows = await membersOf(tx ? tx.db : this.kysely, [conv.id], this.now());
    return rows.filter((r) => r.state === 'member').map((r) => r.accountId);
  }

  /**
   * Publishes an event about a message of the conversation, raised by another area's write in
   * `tx` (attachments finalized onto it), to the audience the message's own events have.
   */
  async announce<K extends EventType>(
    tx: Tx,
    conversationId: string,
    type: K,
    at: number,
    fields: EventFields[K],
  ): Promise<void> {
    const [conv] = await conversationsByIds(tx.db, [conversationId]);
    if (!conv) return;
    emitConversationEvent(
      tx,
      this.deps.events,
      conv,
      await this.recipients(tx, conv),
      type,
      at,
      fields,
    );
  }

  /** Looks up `@username` and `#channel` mentions, and keeps `@here` and `@channel` (at most two queries, none without any). */
  async resolveMentions(access: Access, accountId: string, text: string): Promise<StoredMentions> {
    const parsed = parseMentions(text);
    const users = await accountIdsByUsernameKey(this.kysely, parsed.usernames);
    const channels =
      access.row.kind === 'channel'
        ? await visibleChannelIdsByName(
            this.kysely,
            access.row.workspaceId,
            accountId,
            parsed.channels,
            !can(access.role, 'channel:browse'),
          )
        : [];
    return { users, channels, here: parsed.here, channel: parsed.channel };
  }
}
