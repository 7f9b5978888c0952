import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { Tx } from '../../db/transaction.js';
import { notFound, validation } from '../../errors.js';
import type { EventFields } from '../../events/catalog.js';
import { isId } from '../../lib/ids.js';

import { ConversationPart } from './conversation-part.js';
import { emitConversationEvent } from './events.js';
import {
  acceptPendingMember,
  deleteConversation,
  deleteConversationMember,
  deleteExpiredInvites,
  findConversation,
  findConversationAccess,
  INVITE_TTL_MS,
  joinedByInvitation,
  membersOf,
} from './queries.js';
import { toRow } from './rows.js';
import { toConversationView, type ConversationView } from './views.js';

/** Answering invitations to encrypted conversations, and leaving a conversation. */
export class ConversationInvitations extends ConversationPart {
  /** Accepts a live invitation; accepting again changes nothing. */
  async acceptInvite(
    actor: Actor,
    serverId: string,
    conversationId: string,
  ): Promise<ConversationView> {
    const callerId = actingAccountId(actor);
    const now = this.now();
    if (!isId(serverId) || !isId(conversationId)) throw notFound('invitation');
    const row = await findConversationAccess(this.kysely, conversationId, callerId);
    if (!row || row.workspaceId !== serverId) throw notFound('invitation');
    const conv = toRow(row);
    if (row.memberState === 'member') {
      // Accepting again changes nothing; a member who never held an invitation has none to accept.
      if (await joinedByInvitation(this.kysely, conv.id, callerId)) return toConversationView(conv);
      throw notFound('invitation');
    }
    if (row.memberState !== 'pending' || (row.memberJoinedAt ?? 0) <= now - INVITE_TTL_MS) {
      throw notFound('invitation');
    }
    if (!(await this.deps.dm.hasDevice(callerId))) {
      throw validation('set up a device for encryption before accepting the invitation');
    }
    await this.deps.db.transaction(async (tx) => {
      // Accepted meanwhile by another request: nothing more to do.
      if (!(await acceptPendingMember(tx.db, conv.id, callerId, now))) return;
      const members = (await membersOf(tx.db, [conv.id], now))
        .filter((m) => m.state === 'member')
        .map((m) => m.accountId);
      emitConversationEvent(tx, this.deps.events, conv, members, 'MemberAddedToConversation', now, {
        userId: callerId,
        state: 'member',
        addedBy: callerId,
      });
      emitConversationEvent(tx, this.deps.events, conv, members, 'MlsMembershipChanged', now, {
        added: [callerId],
        removed: [],
      });
    });
    return toConversationView(conv);
  }

  /** Declines (deletes) a live invitation. */
  async declineInvite(actor: Actor, serverId: string, conversationId: string) {
    const callerId = actingAccountId(actor);
    const now = this.now();
    if (!isId(serverId) || !isId(conversationId)) throw notFound('invitation');
    const conv = await findConversation(this.kysely, conversationId);
    if (!conv || conv.workspaceId !== serverId) throw notFound('invitation');
    await this.deps.db.transaction(async (tx) => {
      if (!(await deleteConversationMember(tx.db, conv.id, callerId, { liveInviteAt: now })))
        throw notFound('invitation');
      const members = (await membersOf(tx.db, [conv.id], now)).map((m) => m.accountId);
      this.announceGone(tx, conv, members, callerId, now, {
        removedBy: null,
        reason: 'inviteDeclined',
      });
    });
    return true;
  }

  /**
   * Leaves a group conversation: the caller's membership goes, the others hear
   * MemberRemovedFromConversation (reason `left`), and the conversation leaves the caller's
   * inbox. A direct conversation cannot be left (block the person instead), and a channel is
   * left with `leaveChannel`: both answer VALIDATION. The last member leaving deletes the group.
   */
  async leave(actor: Actor, conversationId: string): Promise<boolean> {
    const callerId = actingAccountId(actor);
    const now = this.now();
    if (!isId(conversationId)) throw notFound('conversation');
    const conv = await findConversation(this.kysely, conversationId);
    if (!conv) throw notFound('conversation');
    await this.deps.db.transaction(async (tx) => {
      if (!(await deleteConversationMember(tx.db, conv.id, callerId, 'member')))
        throw notFound('conversation');
      if (conv.kind === 'direct') {
        throw validation('a direct conversation cannot be left; block the person to stop it');
      }
      if (conv.kind === 'channel') throw validation('leave a channel with leaveChannel');
      const members = (await membersOf(tx.db, [conv.id], now)).map((m) => m.accountId);
      if (!members.some((id) => id !== callerId)) {
        await deleteConversation(tx.db, conv.id);
      }
      this.announceGone(tx, conv, members, callerId, now, { removedBy: callerId, reason: 'left' });
    });
    return true;
  }

  /** Tells the members, and the caller who is no longer one, that the caller's membership went. */
  private announceGone(
    tx: Tx,
    conv: ConversationTable,
    members: readonly string[],
    callerId: string,
    now: number,
    how: Omit<EventFields['MemberRemovedFromConversation'], 'userId'>,
  ) {
    emitConversationEvent(
      tx,
      this.deps.events,
      conv,
      [...members, callerId],
      'MemberRemovedFromConversation',
      now,
      { userId: callerId, ...how },
    );
  }

  /** Deletes invitations past their 30 days (reads already ignore them). */
  async purgeExpiredInvites(): Promise<number> {
    return deleteExpiredInvites(this.kysely, this.now());
  }
}
