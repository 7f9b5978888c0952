import { iso } from '../../lib/iso-time.js';
import { actingAccountId, type Actor } from '../../auth/actor.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { Tx } from '../../db/transaction.js';
import { forbidden, notFound, validation } from '../../errors.js';
import { isId, newId } from '../../lib/ids.js';

import { assertWritableBy, plausibleId } from './access.js';
import { ConversationPart } from './conversation-part.js';
import type { DmRequestView, Person, Reach } from './dm-port.js';
import { emitConversationEvent, emitToUsers } from './events.js';
import {
  claimDirectPair,
  countPendingInvites,
  deletePendingMembers,
  findAccounts,
  findConversation,
  findConversationAccess,
  findDirectPair,
  insertConversation,
  insertMembers,
  membersOf,
} from './queries.js';
import { memberRow, toRow } from './rows.js';
import { toConversationView, type ConversationView } from './views.js';

/** People in one direct or group conversation, the creator included (Discord allows 10). */
export const MAX_GROUP_MEMBERS = 50;
export const GROUP_NAME_MAX = 100;

export interface CreateConversationResult {
  conversation: ConversationView;
  reused: boolean;
  dmRequestsSent: DmRequestView[];
}

/** Thrown inside the create transaction when the two already have a DIRECT conversation. */
class PairTaken extends Error {}

const pairKey = (a: string, b: string, encrypted: boolean) =>
  `${a < b ? a : b}:${a < b ? b : a}:${encrypted ? 'e' : 'p'}`;

/**
 * Starting DIRECT and GROUP conversations (or reusing the DIRECT one two people have) and
 * adding people to a group, under the DM settings and blocks of the dm area.
 */
export class ConversationCreation extends ConversationPart {
  /** Starts a DIRECT or GROUP conversation, or reuses the DIRECT one two people already have. */
  async create(
    actor: Actor,
    input: { memberIds: unknown; name?: unknown; encrypted?: unknown },
  ): Promise<CreateConversationResult> {
    const callerId = actingAccountId(actor);
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
    return { conversation: toConversationView(conv), reused: false, dmRequestsSent: [] };
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
        return { conversation: toConversationView(conv), reused: false, dmRequestsSent: sent };
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
      return { conversation: toConversationView(conv), reused: true, dmRequestsSent: [] };
    }
    await this.deps.db.transaction(async (tx) => {
      await this.deps.dm.acceptPendingFrom(tx, conv, other.id, caller.id, now);
      await this.deps.dm.joinDirect(tx, conv, other.id, caller.id, now);
    });
    return { conversation: toConversationView(conv), reused: true, dmRequestsSent: [] };
  }

  /** Adds people to a GROUP conversation (members only). */
  async addMembers(
    actor: Actor,
    input: { conversationId: unknown; memberIds: unknown },
  ): Promise<ConversationView> {
    const callerId = actingAccountId(actor);
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
    if (fresh.length === 0) return toConversationView(conv);
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
      await deletePendingMembers(tx.db, conv.id, fresh);
      await insertMembers(
        tx.db,
        added.map((p) => memberRow(conv.id, p.id, states.get(p.id) ?? 'member', now)),
      );
      const members = [...current.filter((m) => m.state === 'member').map((m) => m.accountId)];
      for (const p of added) {
        const state = states.get(p.id) ?? 'member';
        // An invitee is not a member yet: their copy cannot go by conversation membership.
        const emit = state === 'pending' ? emitToUsers : emitConversationEvent;
        emit(tx, this.deps.events, conv, [...members, p.id], 'MemberAddedToConversation', now, {
          userId: p.id,
          state,
          addedBy: callerId,
        });
      }
      const joined = added.filter((p) => (states.get(p.id) ?? 'member') === 'member');
      if (conv.encrypted === 1 && joined.length > 0) {
        emitConversationEvent(
          tx,
          this.deps.events,
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
    return toConversationView(conv);
  }

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
    emitConversationEvent(tx, this.deps.events, conv, members, 'ConversationCreated', now, {
      kind: conv.kind,
      name: conv.name,
      encrypted: conv.encrypted === 1,
      createdBy: creatorId,
      memberIds: members,
      pendingMemberIds: pending,
      createdAt: iso(now),
    });
    for (const id of pending) {
      emitToUsers(tx, this.deps.events, conv, [...members, id], 'MemberAddedToConversation', now, {
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
