import { actingAccountId, type Actor, personOf } from '../../auth/actor.js';
import { notFound } from '../../errors.js';
import { parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

import { assertReadable, plausibleId } from './access.js';
import { ConversationPart } from './conversation-part.js';
import { memberCounts, memberPages, ownMemberRows, pendingInvitees } from './member-lists.js';
import { cursorOf, type Page, type PageArgs, parsePageArgs } from './paging.js';
import type { DmRequestView } from './dm-port.js';
import { findConversationAccess, inboxPage, unreadCounts } from './queries.js';
import { toConversationView, type ConversationView } from './views.js';

/** The most members a page of `Conversation.members` holds, and how many when not said. */
export const MEMBER_PAGE_MAX = 1000;
export const MEMBER_PAGE_DEFAULT = 500;

/** Reading: one conversation, the inbox, a page's fields, and what the caller sees of them. */
export class ConversationReading extends ConversationPart {
  /** The caller's view of a conversation, for reading (NOT_FOUND / FORBIDDEN as the rules say). */
  async get(actor: Actor, conversationId: string): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId);
    return toConversationView(assertReadable(row, this.now()).row);
  }

  /** The caller's conversations, newest activity first (see `inboxPage`). */
  async inbox(actor: Actor, args: PageArgs): Promise<Page<ConversationView>> {
    const accountId = actingAccountId(actor);
    const { before, after, limit } = parsePageArgs(args);
    const { rows, more } = await inboxPage(this.kysely, accountId, {
      now: this.now(),
      limit,
      before,
      after,
    });
    const items = rows.map(toConversationView);
    const first = items[0];
    const last = items[items.length - 1];
    const cur = (r: ConversationView | undefined) => (r ? cursorOf(r.lastActivityAt, r.id) : null);
    if (before) {
      return {
        items,
        hasMore: more,
        nextCursor: more ? cur(first) : null,
        prevCursor: cur(last),
      };
    }
    return {
      items,
      hasMore: more,
      nextCursor: more ? cur(last) : null,
      prevCursor: after ? cur(first) : null,
    };
  }

  /**
   * A page of the members of each conversation (`Conversation.members` and `memberIds`): in the
   * order they joined, `limit` 1 to 1,000 (default 500). VALIDATION for bad paging arguments.
   */
  async memberPages(conversationIds: readonly string[], args: KeysetArgs) {
    const page = parseKeysetArgs(args, { max: MEMBER_PAGE_MAX, default: MEMBER_PAGE_DEFAULT });
    return memberPages(this.kysely, conversationIds, page);
  }

  memberCounts(conversationIds: readonly string[]) {
    return memberCounts(this.kysely, conversationIds);
  }

  /** The caller's own rows in the conversations (for `standing`); none for a signed-out caller. */
  async ownMemberRows(actor: Actor | null, conversationIds: readonly string[]) {
    const me = actor && personOf(actor)?.accountId;
    return me ? ownMemberRows(this.kysely, me, conversationIds, this.now()) : [];
  }

  pendingInvitees(conversationIds: readonly string[]) {
    return pendingInvitees(this.kysely, conversationIds, this.now());
  }

  unreadCounts(actor: Actor, conversationIds: readonly string[]) {
    const accountId = actingAccountId(actor);
    return unreadCounts(this.kysely, accountId, conversationIds);
  }

  dmRequestsFor(conversationIds: readonly string[]): Promise<DmRequestView[]> {
    return this.deps.dm.requestsFor(conversationIds);
  }

  /** Where the actor stands in a conversation, from its own rows (`ownMemberRows`). */
  standing(
    actor: Actor | null,
    members: readonly { accountId: string; state: string }[],
  ): 'member' | 'pending' | null {
    const me = actor && personOf(actor)?.accountId;
    const mine = me ? members.find((m) => m.accountId === me) : undefined;
    return mine?.state === 'member' || mine?.state === 'pending' ? mine.state : null;
  }

  /** The MLS group of an encrypted conversation, named to its members only. */
  mlsGroup(
    actor: Actor | null,
    conversation: Pick<ConversationView, 'id' | 'encrypted'>,
    members: readonly { accountId: string; state: string }[],
  ): string | null {
    // Opaque for now: the conversation's id names its group.
    return conversation.encrypted && this.standing(actor, members) === 'member'
      ? conversation.id
      : null;
  }

  /** The actor's own unanswered request of a DIRECT conversation (from `dmRequestsFor`). */
  ownOpenRequest<R extends { fromId: string; state: string }>(
    actor: Actor | null,
    conversation: Pick<ConversationView, 'kind'>,
    requests: readonly R[],
  ): R | null {
    if (conversation.kind !== 'direct') return null;
    const me = actor && personOf(actor)?.accountId;
    return requests.find((r) => r.fromId === me && r.state !== 'accepted') ?? null;
  }
}
