import type { Logger } from 'pino';

import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type {
  ConversationMemberTable,
  ConversationTable,
  DmRequestTable,
} from '../../db/tables/collaboration.js';
import type { Tx } from '../../db/transaction.js';
import type { EventBus } from '../../events/bus.js';
import { forbidden, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import type { DmService, Person, Reach } from '../dm/dm-service.js';
import {
  answerDmRequest,
  requestsForConversation,
  requestsForConversations,
} from '../dm/queries.js';

import { assertReadable, assertWritableBy, plausibleId } from './access.js';
import { emitConversationEvent, emitToUsers, iso } from './events.js';
import { cursorOf, parsePageArgs, type Page, type PageArgs } from './paging.js';
import {
  claimDirectPair,
  countPendingInvites,
  deleteExpiredInvites,
  findAccounts,
  findConversation,
  findConversationAccess,
  findDirectPair,
  INVITE_TTL_MS,
  inboxPage,
  insertConversation,
  insertMembers,
  joinedByInvitation,
  lastMessages,
  membersOf,
  unreadCounts,
} from './queries.js';

/** People in one direct or group conversation, the creator included (Discord allows 10). */
export const MAX_GROUP_MEMBERS = 50;
export const GROUP_NAME_MAX = 100;

export interface CreateConversationResult {
  conversation: ConversationTable;
  reused: boolean;
  dmRequestsSent: DmRequestTable[];
}

/** Thrown inside the create transaction when the two already have a DIRECT conversation. */
class PairTaken extends Error {}

const pairKey = (a: string, b: string, encrypted: boolean) =>
  `${a < b ? a : b}:${a < b ? b : a}:${encrypted ? 'e' : 'p'}`;

const memberRow = (
  conversationId: string,
  accountId: string,
  state: 'member' | 'pending',
  at: number,
): ConversationMemberTable => ({
  conversationId,
  accountId,
  state,
  joinedAt: at,
  lastReadAt: null,
  lastReadMessageId: null,
});

/**
 * Direct and group conversations of the direct space, invitations to encrypted conversations,
 * and the inbox (docs/direct-messages.md). Channels are created by the channels area; their
 * reading and writing rules are shared through `access.ts`.
 */
export class ConversationService {
  constructor(
    private readonly deps: {
      db: Db;
      bus: EventBus;
      config: Config;
      clock: Clock;
      log: Logger;
      dm: DmService;
    },
  ) {}

  private get kysely() {
    return this.deps.db.kysely;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** The caller's view of a conversation, for reading (NOT_FOUND / FORBIDDEN as the rules say). */
  async get(accountId: string, conversationId: string): Promise<ConversationTable> {
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, conversationId, accountId);
    return toRow(assertReadable(row, this.now()).row);
  }

  // ---- create and add ------------------------------------------------------------------------

  /** Starts a DIRECT or GROUP conversation, or reuses the DIRECT one two people already have. */
  async create(
    callerId: string,
    input: { memberIds: unknown; name?: unknown; encrypted?: unknown },
  ): Promise<CreateConversationResult> {
    const now = this.now();
    const ids = this.parseMemberIds(input.memberIds, callerId);
    if (ids.length + 1 > MAX_GROUP_MEMBERS) {
      throw validation(`a conversation holds at most ${MAX_GROUP_MEMBERS} people`);
    }
    const encrypted = input.encrypted === true;
    const people = await this.people([callerId, ...ids]);
    const caller = people.get(callerId);
    if (!caller) throw notFound('account');
    const others = ids.map((id) => people.get(id) as Person);
    if (encrypted && !(await this.deps.dm.hasDevice(callerId))) {
      throw validation('set up a device for encryption before starting an encrypted conversation');
    }
    const reach = await this.deps.dm.reach(this.kysely, caller, others);
    if (others.length === 1) {
      const other = others[0] as Person;
      return this.createDirect(caller, other, reach.get(other.id) as Reach, encrypted, now);
    }

    const name = parseGroupName(input.name);
    for (const p of others) {
      if (reach.get(p.id) === 'request') {
        throw forbidden(
          `${p.username} has not talked with you yet: send them a direct message first`,
        );
      }
    }
    const states = await this.inviteStates(others, encrypted, now);
    const conv = newConversation('group', callerId, name, encrypted, now);
    await this.deps.db.transaction(async (tx) => {
      await insertConversation(tx.db, conv);
      await insertMembers(tx.db, [
        memberRow(conv.id, callerId, 'member', now),
        ...others.map((p) => memberRow(conv.id, p.id, states.get(p.id) ?? 'member', now)),
      ]);
      this.announceCreated(tx, conv, callerId, states, now);
    });
    return { conversation: conv, reused: false, dmRequestsSent: [] };
  }

  private async createDirect(
    caller: Person,
    other: Person,
    reach: Reach,
    encrypted: boolean,
    now: number,
  ): Promise<CreateConversationResult> {
    const key = pairKey(caller.id, other.id, encrypted);
    const existing = await findDirectPair(this.kysely, key);
    if (existing) return this.reuseDirect(caller, other, existing.conversationId, now);
    if (reach === 'request') await this.deps.dm.assertMayRequest(this.kysely, caller);
    const states =
      reach === 'request'
        ? new Map<string, 'member' | 'pending'>()
        : await this.inviteStates([other], encrypted, now);
    const conv = newConversation('direct', caller.id, null, encrypted, now);
    try {
      return await this.deps.db.transaction(async (tx) => {
        await insertConversation(tx.db, conv);
        if (!(await claimDirectPair(tx.db, key, conv.id))) throw new PairTaken();
        const rows = [memberRow(conv.id, caller.id, 'member', now)];
        const otherState = states.get(other.id);
        if (otherState) rows.push(memberRow(conv.id, other.id, otherState, now));
        await insertMembers(tx.db, rows);
        const sent =
          reach === 'request'
            ? [await this.deps.dm.createRequest(tx, caller.id, other.id, conv.id, now)]
            : [];
        this.announceCreated(tx, conv, caller.id, states, now);
        return { conversation: conv, reused: false, dmRequestsSent: sent };
      });
    } catch (err) {
      if (!(err instanceof PairTaken)) throw err;
      // Both started one at the same moment: the other transaction's conversation stands.
      const winner = await findDirectPair(this.kysely, key);
      if (!winner) throw err;
      return this.reuseDirect(caller, other, winner.conversationId, now);
    }
  }

  /**
   * The two already have a DIRECT conversation. A caller who is not in it yet (the other person
   * asked them with a request, pending or declined) joins it: starting a conversation with
   * someone who asked answers their request.
   */
  private async reuseDirect(
    caller: Person,
    other: Person,
    conversationId: string,
    now: number,
  ): Promise<CreateConversationResult> {
    const conv = await findConversation(this.kysely, conversationId);
    if (!conv) throw notFound('conversation');
    const members = await membersOf(this.kysely, [conv.id], now);
    if (members.some((m) => m.accountId === caller.id)) {
      return { conversation: conv, reused: true, dmRequestsSent: [] };
    }
    await this.deps.db.transaction(async (tx) => {
      for (const req of await requestsForConversation(tx.db, conv.id)) {
        if (req.fromId === other.id && req.toId === caller.id && req.state === 'pending') {
          await answerDmRequest(tx.db, req.id, 'accepted', now);
          emitToUsers(tx, this.deps.bus, conv, [other.id, caller.id], 'DmRequestAnswered', now, {
            requestId: req.id,
            fromId: other.id,
            toId: caller.id,
            state: 'accepted',
          });
        }
      }
      await this.deps.dm.joinDirect(tx, conv, other.id, caller.id, now);
    });
    return { conversation: conv, reused: true, dmRequestsSent: [] };
  }

  /** Adds people to a GROUP conversation (members only). */
  async addMembers(
    callerId: string,
    input: { conversationId: unknown; memberIds: unknown },
  ): Promise<ConversationTable> {
    const now = this.now();
    if (!plausibleId(input.conversationId)) throw notFound('conversation');
    const row = await findConversationAccess(this.kysely, input.conversationId, callerId);
    const conv = toRow(assertWritableBy(row, now).row);
    if (conv.kind !== 'group') {
      throw validation(
        conv.kind === 'direct'
          ? 'a direct conversation has exactly two people: start a group conversation instead'
          : 'add people to a channel with the channel operations',
      );
    }
    const ids = this.parseMemberIds(input.memberIds, callerId);
    const current = await membersOf(this.kysely, [conv.id], now);
    const present = new Set(current.map((m) => m.accountId));
    const fresh = ids.filter((id) => !present.has(id));
    if (fresh.length === 0) return conv;
    if (current.length + fresh.length > MAX_GROUP_MEMBERS) {
      throw validation(`a conversation holds at most ${MAX_GROUP_MEMBERS} people`);
    }
    const people = await this.people([callerId, ...fresh]);
    const caller = people.get(callerId) as Person;
    const added = fresh.map((id) => people.get(id) as Person);
    const reach = await this.deps.dm.reach(this.kysely, caller, added);
    for (const p of added) {
      if (reach.get(p.id) === 'request') {
        throw forbidden(
          `${p.username} has not talked with you yet: send them a direct message first`,
        );
      }
    }
    const states = await this.inviteStates(added, conv.encrypted === 1, now);
    await this.deps.db.transaction(async (tx) => {
      // An invitation that lapsed still has its row; it gives way to the new one.
      await tx.db
        .deleteFrom('conversation_member')
        .where('conversationId', '=', conv.id)
        .where('accountId', 'in', fresh)
        .where('state', '=', 'pending')
        .execute();
      await insertMembers(
        tx.db,
        added.map((p) => memberRow(conv.id, p.id, states.get(p.id) ?? 'member', now)),
      );
      const members = [...current.filter((m) => m.state === 'member').map((m) => m.accountId)];
      for (const p of added) {
        const state = states.get(p.id) ?? 'member';
        // An invitee is not a member yet: their copy cannot go by conversation membership.
        const emit = state === 'pending' ? emitToUsers : emitConversationEvent;
        emit(tx, this.deps.bus, conv, [...members, p.id], 'MemberAddedToConversation', now, {
          userId: p.id,
          state,
          addedBy: callerId,
        });
      }
      const joined = added.filter((p) => (states.get(p.id) ?? 'member') === 'member');
      if (conv.encrypted === 1 && joined.length > 0) {
        emitConversationEvent(
          tx,
          this.deps.bus,
          conv,
          [...members, ...joined.map((p) => p.id)],
          'MlsMembershipChanged',
          now,
          {
            added: joined.map((p) => p.id),
            removed: [],
          },
        );
      }
    });
    return conv;
  }

  // ---- invitations to encrypted conversations ------------------------------------------------

  /** Accepts a live invitation; accepting again changes nothing. */
  async acceptInvite(
    callerId: string,
    serverId: string,
    conversationId: string,
  ): Promise<ConversationTable> {
    const now = this.now();
    if (!isId(serverId) || !isId(conversationId)) throw notFound('invitation');
    const row = await findConversationAccess(this.kysely, conversationId, callerId);
    if (!row || row.workspaceId !== serverId) throw notFound('invitation');
    const conv = toRow(row);
    if (row.memberState === 'member') {
      // Accepting again changes nothing; a member who never held an invitation has none to accept.
      if (await joinedByInvitation(this.kysely, conv.id, callerId)) return conv;
      throw notFound('invitation');
    }
    if (row.memberState !== 'pending' || (row.memberJoinedAt ?? 0) <= now - INVITE_TTL_MS) {
      throw notFound('invitation');
    }
    if (!(await this.deps.dm.hasDevice(callerId))) {
      throw validation('set up a device for encryption before accepting the invitation');
    }
    await this.deps.db.transaction(async (tx) => {
      const res = await tx.db
        .updateTable('conversation_member')
        .set({
          state: 'member',
          joinedAt: now,
          lastReadAt: null,
          lastReadMessageId: null,
          acceptedInviteAt: now,
        })
        .where('conversationId', '=', conv.id)
        .where('accountId', '=', callerId)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      // Accepted meanwhile by another request: nothing more to do.
      if (Number(res.numUpdatedRows) !== 1) return;
      const members = (await membersOf(tx.db, [conv.id], now))
        .filter((m) => m.state === 'member')
        .map((m) => m.accountId);
      emitConversationEvent(tx, this.deps.bus, conv, members, 'MemberAddedToConversation', now, {
        userId: callerId,
        state: 'member',
        addedBy: callerId,
      });
      emitConversationEvent(tx, this.deps.bus, conv, members, 'MlsMembershipChanged', now, {
        added: [callerId],
        removed: [],
      });
    });
    return conv;
  }

  /** Declines (deletes) a live invitation. */
  async declineInvite(callerId: string, serverId: string, conversationId: string) {
    const now = this.now();
    if (!isId(serverId) || !isId(conversationId)) throw notFound('invitation');
    const conv = await findConversation(this.kysely, conversationId);
    if (!conv || conv.workspaceId !== serverId) throw notFound('invitation');
    await this.deps.db.transaction(async (tx) => {
      const res = await tx.db
        .deleteFrom('conversation_member')
        .where('conversationId', '=', conv.id)
        .where('accountId', '=', callerId)
        .where('state', '=', 'pending')
        .where('joinedAt', '>', now - INVITE_TTL_MS)
        .executeTakeFirst();
      if (Number(res.numDeletedRows) !== 1) throw notFound('invitation');
      const members = (await membersOf(tx.db, [conv.id], now)).map((m) => m.accountId);
      emitConversationEvent(
        tx,
        this.deps.bus,
        conv,
        [...members, callerId],
        'MemberRemovedFromConversation',
        now,
        { userId: callerId, removedBy: null, reason: 'inviteDeclined' },
      );
    });
    return true;
  }

  /**
   * Leaves a group conversation: the caller's membership goes, the others hear
   * MemberRemovedFromConversation (reason `left`), and the conversation leaves the caller's
   * inbox. A direct conversation cannot be left (block the person instead), and a channel is
   * left with `leaveChannel`: both answer VALIDATION. The last member leaving deletes the group.
   */
  async leave(callerId: string, conversationId: string): Promise<boolean> {
    const now = this.now();
    if (!isId(conversationId)) throw notFound('conversation');
    const conv = await findConversation(this.kysely, conversationId);
    if (!conv) throw notFound('conversation');
    await this.deps.db.transaction(async (tx) => {
      const res = await tx.db
        .deleteFrom('conversation_member')
        .where('conversationId', '=', conv.id)
        .where('accountId', '=', callerId)
        .where('state', '=', 'member')
        .executeTakeFirst();
      if (Number(res.numDeletedRows) !== 1) throw notFound('conversation');
      if (conv.kind === 'direct') {
        throw validation('a direct conversation cannot be left; block the person to stop it');
      }
      if (conv.kind === 'channel') throw validation('leave a channel with leaveChannel');
      const members = (await membersOf(tx.db, [conv.id], now)).map((m) => m.accountId);
      if (!members.some((id) => id !== callerId)) {
        await tx.db.deleteFrom('conversation').where('id', '=', conv.id).execute();
      }
      emitConversationEvent(
        tx,
        this.deps.bus,
        conv,
        [...members, callerId],
        'MemberRemovedFromConversation',
        now,
        { userId: callerId, removedBy: callerId, reason: 'left' },
      );
    });
    return true;
  }

  /** Deletes invitations past their 30 days (reads already ignore them). */
  async purgeExpiredInvites(): Promise<number> {
    return deleteExpiredInvites(this.kysely, this.now());
  }

  // ---- inbox ---------------------------------------------------------------------------------

  /** The caller's conversations, newest activity first (see `inboxPage`). */
  async inbox(accountId: string, args: PageArgs): Promise<Page<ConversationTable>> {
    const { before, after, limit } = parsePageArgs(args);
    const { rows, more } = await inboxPage(this.kysely, accountId, {
      now: this.now(),
      limit,
      before,
      after,
    });
    const first = rows[0];
    const last = rows[rows.length - 1];
    const cur = (r: ConversationTable | undefined) => (r ? cursorOf(r.lastActivityAt, r.id) : null);
    if (before) {
      return {
        items: rows,
        hasMore: more,
        nextCursor: more ? cur(first) : null,
        prevCursor: cur(last),
      };
    }
    return {
      items: rows,
      hasMore: more,
      nextCursor: more ? cur(last) : null,
      prevCursor: after ? cur(first) : null,
    };
  }

  // ---- batch reads for a page's fields (one query per kind per page) -------------------------

  membersOf(conversationIds: readonly string[]) {
    return membersOf(this.kysely, conversationIds, this.now());
  }

  unreadCounts(accountId: string, conversationIds: readonly string[]) {
    return unreadCounts(this.kysely, accountId, conversationIds);
  }

  lastMessages(conversationIds: readonly string[]) {
    return lastMessages(this.kysely, conversationIds);
  }

  dmRequestsFor(conversationIds: readonly string[]) {
    return requestsForConversations(this.kysely, conversationIds);
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** Validated, de-duplicated ids of other people (the caller is dropped). */
  private parseMemberIds(value: unknown, callerId: string): string[] {
    if (!Array.isArray(value)) throw validation('memberIds must be a list of user ids');
    if (value.length > MAX_GROUP_MEMBERS) {
      throw validation(`a conversation holds at most ${MAX_GROUP_MEMBERS} people`);
    }
    const ids = new Set<string>();
    for (const v of value) {
      if (typeof v !== 'string' || !isId(v)) throw notFound('user');
      if (v !== callerId) ids.add(v);
    }
    if (ids.size === 0) throw validation('name at least one other person');
    return [...ids];
  }

  /** The named accounts; NOT_FOUND when one does not exist. */
  private async people(ids: readonly string[]): Promise<Map<string, Person>> {
    const rows = await findAccounts(this.kysely, ids);
    const map = new Map(rows.map((r) => [r.id, r as Person]));
    for (const id of ids) if (!map.has(id)) throw notFound('user');
    return map;
  }

  /**
   * Who joins as a member and who is invited (pending): in an encrypted conversation, people
   * without a device set up for encryption are invited. Refuses the whole create or add when one
   * of them already holds SVC_LIMIT_PENDING_INVITES_PER_USER invitations.
   */
  private async inviteStates(
    people: readonly Person[],
    encrypted: boolean,
    now: number,
  ): Promise<Map<string, 'member' | 'pending'>> {
    const out = new Map<string, 'member' | 'pending'>();
    for (const p of people) {
      out.set(p.id, !encrypted || (await this.deps.dm.hasDevice(p.id)) ? 'member' : 'pending');
    }
    const invited = people.filter((p) => out.get(p.id) === 'pending');
    const cap = this.deps.config.limits.pendingInvitesPerUser;
    if (cap !== null && invited.length > 0) {
      const held = await countPendingInvites(
        this.kysely,
        invited.map((p) => p.id),
        now,
      );
      for (const p of invited) {
        if ((held.get(p.id) ?? 0) >= cap) {
          throw validation(
            `limit reached: ${p.username} already holds ${cap} pending invitations to encrypted conversations (SVC_LIMIT_PENDING_INVITES_PER_USER)`,
            { limit: cap },
          );
        }
      }
    }
    return out;
  }

  /** ConversationCreated to the members; MemberAddedToConversation to each invitee. */
  private announceCreated(
    tx: Tx,
    conv: ConversationTable,
    creatorId: string,
    states: Map<string, 'member' | 'pending'>,
    now: number,
  ) {
    const members = [creatorId, ...[...states].filter(([, s]) => s === 'member').map(([id]) => id)];
    const pending = [...states].filter(([, s]) => s === 'pending').map(([id]) => id);
    emitConversationEvent(tx, this.deps.bus, conv, members, 'ConversationCreated', now, {
      kind: conv.kind,
      name: conv.name,
      encrypted: conv.encrypted === 1,
      createdBy: creatorId,
      memberIds: members,
      pendingMemberIds: pending,
      createdAt: iso(now),
    });
    for (const id of pending) {
      emitToUsers(tx, this.deps.bus, conv, [...members, id], 'MemberAddedToConversation', now, {
        userId: id,
        state: 'pending',
        addedBy: creatorId,
      });
    }
  }
}

function parseGroupName(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw validation('name must be a string');
  const name = value.trim();
  if (name === '') return null;
  if ([...name].length > GROUP_NAME_MAX) {
    throw validation(`a group name is at most ${GROUP_NAME_MAX} characters`);
  }
  return name;
}

function newConversation(
  kind: 'direct' | 'group',
  createdBy: string,
  name: string | null,
  encrypted: boolean,
  now: number,
): ConversationTable {
  return {
    id: newId(),
    workspaceId: DIRECT_SPACE_ID,
    kind,
    name,
    topic: null,
    isPrivate: 1,
    encrypted: encrypted ? 1 : 0,
    archivedAt: null,
    createdBy,
    createdAt: now,
    lastActivityAt: now,
  };
}

/** The conversation row out of an access row (drops the caller's membership columns). */
export function toRow(r: ConversationTable): ConversationTable {
  return {
    id: r.id,
    workspaceId: r.workspaceId,
    kind: r.kind,
    name: r.name,
    topic: r.topic,
    isPrivate: r.isPrivate,
    encrypted: r.encrypted,
    archivedAt: r.archivedAt,
    createdBy: r.createdBy,
    createdAt: r.createdAt,
    lastActivityAt: r.lastActivityAt,
  };
}
