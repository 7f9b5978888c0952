import { iso } from '../../lib/iso-time.js';
import { actingAccountId, personOf, type Actor } from '../../auth/actor.js';
import type { DmPartners, DmReach } from '../../config/index.js';
import type { Executor } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { Tx } from '../../db/transaction.js';
import { capExceeded, forbidden, notFound, rateLimited, validation } from '../../errors.js';
import { DAY_MS, MINUTE_MS } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import type { AccountService } from '../accounts/index.js';
import type { AreaDeps } from '../area-deps.js';
import type { MessageView } from '../messages/index.js';
import {
  emitConversationEvent,
  emitToUsers,
  findAccounts,
  findConversation,
  insertMembers,
  toConversationView,
  type ConversationView,
  type DirectConversation,
  type DmRequestView,
  type DirectMessaging,
  type Person,
  type Reach,
} from '../conversations/index.js';

import {
  answerDmRequest,
  blockedBy,
  declineRequestsBetween,
  deleteBlock,
  findDmRequest,
  findDmSettings,
  insertBlock,
  insertDmRequest,
  newestMessagesOf,
  pendingRequestsTo,
  recentRequestTimes,
  relationships,
  requestsForConversation,
  requestsForConversations,
  upsertDmSettings,
} from './queries.js';
import {
  effectiveSettings,
  floorNotes,
  isStranger,
  looserThan,
  PARTNERS_ORDER,
  REACH_ORDER,
  reachAllows,
  type DmSettingsValue,
  type FloorNote,
  type Relationship,
} from './rules.js';
import { keysetRows, parseKeysetArgs, type KeysetArgs } from '../paging/index.js';

/** One person in the caller's block list. */
export interface BlockedPerson {
  userId: string;
  blockedAt: number;
}

export interface DmSettingsView extends DmSettingsValue {
  outsideFloorFrom: FloorNote[];
}

/** Messages a DM request shows its recipient before they answer. */
export const PREVIEW_MESSAGES = 10;

/** Checks an account has a device set up for encryption (the devices area provides it). */
export interface EncryptionDevices {
  hasEncryptionDevice(accountId: string): Promise<boolean>;
}

/** DM settings and floors, who may reach whom, DM requests to strangers, and blocks. */
export class DmService implements DirectMessaging {
  constructor(
    private readonly deps: AreaDeps & {
      accounts: AccountService;
      devices: EncryptionDevices;
    },
  ) {}

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  // ---- settings ------------------------------------------------------------------------------

  async settings(actor: Actor): Promise<DmSettingsView> {
    const accountId = actingAccountId(actor);
    const [row] = await findDmSettings(this.deps.db.kysely, [accountId]);
    return this.view(row as DmSettingsValue | undefined);
  }

  private view(stored: DmSettingsValue | undefined): DmSettingsView {
    const floors = this.deps.config.dm;
    return { ...effectiveSettings(stored, floors), outsideFloorFrom: floorNotes(floors) };
  }

  /** Changes settings; a choice looser than the operator's floor answers VALIDATION. */
  async updateSettings(
    actor: Actor,
    input: { inbound?: DmReach | null; outbound?: DmReach | null; partners?: DmPartners | null },
  ): Promise<DmSettingsView> {
    const accountId = actingAccountId(actor);
    const floors = this.deps.config.dm;
    const current = await this.settings(actor);
    const next: DmSettingsValue = {
      inbound: input.inbound ?? current.inbound,
      outbound: input.outbound ?? current.outbound,
      partners: input.partners ?? current.partners,
    };
    const problems: string[] = [];
    if (input.inbound && looserThan(REACH_ORDER, input.inbound, floors.inbound))
      problems.push(`inbound may not be looser than ${floors.inbound} (SVC_DM_INBOUND)`);
    if (input.outbound && looserThan(REACH_ORDER, input.outbound, floors.outbound))
      problems.push(`outbound may not be looser than ${floors.outbound} (SVC_DM_OUTBOUND)`);
    if (input.partners && looserThan(PARTNERS_ORDER, input.partners, floors.partners))
      problems.push(`partners may not be looser than ${floors.partners} (SVC_DM_PARTNERS)`);
    if (problems.length > 0) throw validation(`this server's floor: ${problems.join('; ')}`);
    await upsertDmSettings(this.deps.db.kysely, { accountId, ...next });
    return this.view(next);
  }

  // ---- reach ---------------------------------------------------------------------------------

  /**
   * How the caller may reach each person: `direct` (a contact or someone in a shared workspace,
   * both settings allowing it) or `request` (a stranger whose settings take requests from
   * anyone). FORBIDDEN for anyone the caller may not reach at all, with one neutral message for
   * the other person's refusal and a block, so neither is revealed.
   */
  async reach(
    db: Executor,
    caller: Person,
    people: readonly Person[],
  ): Promise<Map<string, Reach>> {
    const ids = people.map((p) => p.id);
    const rels = await relationships(db, caller.id, ids);
    const stored = await findDmSettings(db, [caller.id, ...ids]);
    const byId = new Map(stored.map((s) => [s.accountId, s as DmSettingsValue]));
    const floors = this.deps.config.dm;
    const mine = effectiveSettings(byId.get(caller.id), floors);
    const out = new Map<string, Reach>();
    for (const p of people) {
      const rel = rels.get(p.id) as Relationship;
      const theirs = effectiveSettings(byId.get(p.id), floors);
      const refused = forbidden(`${p.username} does not accept direct messages from you`);
      if (rel.blocked) throw refused;
      if (p.homeServer !== null && mine.partners === 'this_server') {
        throw forbidden(
          `your settings (or this server's) allow conversation partners from this server only; ${p.username} is from another server`,
        );
      }
      if (caller.homeServer !== null && theirs.partners === 'this_server') throw refused;
      if (!reachAllows(mine.outbound, rel)) {
        throw forbidden(
          `your outbound setting (${mine.outbound.replace('_', ' ')}) does not let you start a conversation with ${p.username}`,
        );
      }
      if (!reachAllows(theirs.inbound, rel)) throw refused;
      out.set(p.id, isStranger(rel) ? 'request' : 'direct');
    }
    return out;
  }

  /**
   * May the caller send one more DM request now: VALIDATION during probation (saying when, in
   * minutes rounded up); past the daily limit, VALIDATION naming SVC_LIMIT_DM_REQUESTS_PER_DAY
   * when that cap is the stricter bound (an instance cap), else RATE_LIMITED with the seconds
   * until a slot frees (the relay quota).
   */
  async assertMayRequest(db: Executor, caller: Person): Promise<void> {
    const now = this.now();
    const end = this.deps.accounts.probationEndsAt(caller.createdAt);
    if (end !== null) {
      const minutes = Math.max(1, Math.ceil((end - now) / MINUTE_MS));
      throw validation(
        `new accounts cannot send message requests to people they do not know yet; you can in ${minutes} minute${minutes === 1 ? '' : 's'}`,
        { probationEndsAt: new Date(end).toISOString(), minutes },
      );
    }
    const cap = this.deps.config.limits.dmRequestsPerDay;
    const times = await recentRequestTimes(db, caller.id, now - DAY_MS);
    if (times.length < cap) return;
    if (this.deps.config.dmRequestsBoundBy === 'cap') {
      throw capExceeded('DM requests per day', 'SVC_LIMIT_DM_REQUESTS_PER_DAY', cap);
    }
    // The slot that frees first is the cap-th newest request's, a day after it was sent.
    const frees = (times[cap - 1] as number) + DAY_MS;
    throw rateLimited(
      (frees - now) / 1000,
      `you sent the ${cap} message requests a day your relay allows (SVC_RELAY_DM_REQUESTS_PER_DAY)`,
    );
  }

  /** Records a request and tells the recipient, after commit. */
  createRequest(tx: Tx, fromId: string, toId: string, conversationId: string, now: number) {
    const row: DmRequestView = {
      id: newId(),
      fromId,
      toId,
      conversationId,
      state: 'pending',
      createdAt: now,
      respondedAt: null,
    };
    return insertDmRequest(tx.db, row).then(() => {
      emitToUsers(
        tx,
        this.deps.events,
        { id: conversationId, workspaceId: DIRECT_SPACE_ID, kind: 'direct' },
        [toId],
        'DmRequestReceived',
        now,
        { requestId: row.id, fromId, toId, createdAt: iso(now) },
      );
      return row;
    });
  }

  // ---- requests ------------------------------------------------------------------------------

  /** Pending requests to the caller, newest first, a page at a time (contract: Pagination). */
  async pendingRequests(actor: Actor, args: KeysetArgs = {}): Promise<DmRequestView[]> {
    const accountId = actingAccountId(actor);
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    return keysetRows(await pendingRequestsTo(this.deps.db.kysely, accountId, page), page);
  }

  private async requireRequestTo(db: Executor, accountId: string, requestId: string) {
    if (!isId(requestId)) throw notFound('DM request');
    const req = await findDmRequest(db, requestId);
    if (!req || req.toId !== accountId || req.state !== 'pending') throw notFound('DM request');
    const [blocked] = (await relationships(db, accountId, [req.fromId])).values();
    if (blocked?.blocked) throw notFound('DM request');
    return req;
  }

  /** The recipient joins the DIRECT conversation; the two become contacts. */
  async acceptRequest(actor: Actor, requestId: string): Promise<ConversationView> {
    const accountId = actingAccountId(actor);
    const now = this.now();
    const req = await this.requireRequestTo(this.deps.db.kysely, accountId, requestId);
    const conv = await findConversation(this.deps.db.kysely, req.conversationId);
    if (!conv) throw notFound('DM request');
    if (conv.encrypted === 1 && !(await this.hasDevice(accountId))) {
      throw validation('set up a device for encryption before joining an encrypted conversation');
    }
    await this.deps.db.transaction(async (tx) => {
      if (!(await answerDmRequest(tx.db, req.id, 'accepted', now))) throw notFound('DM request');
      await this.joinDirect(tx, conv, req.fromId, accountId, now);
      emitToUsers(tx, this.deps.events, conv, [req.fromId, accountId], 'DmRequestAnswered', now, {
        requestId: req.id,
        fromId: req.fromId,
        toId: accountId,
        state: 'accepted',
      });
    });
    return toConversationView(conv);
  }

  /**
   * Adds `joinerId` to a DIRECT conversation `otherId` is in, as a member, and announces it to
   * both. Used by accepting a request and by answering one with a conversation of one's own.
   */
  async joinDirect(
    tx: Tx,
    conv: DirectConversation,
    otherId: string,
    joinerId: string,
    now: number,
  ) {
    await insertMembers(tx.db, [
      {
        conversationId: conv.id,
        accountId: joinerId,
        state: 'member',
        joinedAt: now,
        lastReadAt: null,
        lastReadMessageId: null,
      },
    ]);
    emitConversationEvent(
      tx,
      this.deps.events,
      conv,
      [otherId, joinerId],
      'MemberAddedToConversation',
      now,
      {
        userId: joinerId,
        state: 'member',
        addedBy: joinerId,
      },
    );
  }

  /**
   * Accepts the pending request `fromId` sent `toId` in the conversation, if there is one (the
   * recipient answered it by starting a conversation of their own), and tells both.
   */
  async acceptPendingFrom(
    tx: Tx,
    conv: DirectConversation,
    fromId: string,
    toId: string,
    now: number,
  ): Promise<void> {
    for (const req of await requestsForConversation(tx.db, conv.id)) {
      if (req.fromId === fromId && req.toId === toId && req.state === 'pending') {
        await answerDmRequest(tx.db, req.id, 'accepted', now);
        emitToUsers(tx, this.deps.events, conv, [fromId, toId], 'DmRequestAnswered', now, {
          requestId: req.id,
          fromId,
          toId,
          state: 'accepted',
        });
      }
    }
  }

  /** The DM requests of these conversations (the inbox's request fields). */
  requestsFor(conversationIds: readonly string[]): Promise<DmRequestView[]> {
    return requestsForConversations(this.deps.db.kysely, conversationIds);
  }

  /** Declines a request. The sender is not told; their view keeps showing it as pending. */
  async declineRequest(actor: Actor, requestId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    const now = this.now();
    const req = await this.requireRequestTo(this.deps.db.kysely, accountId, requestId);
    await this.deps.db.transaction(async (tx) => {
      if (!(await answerDmRequest(tx.db, req.id, 'declined', now))) throw notFound('DM request');
      emitToUsers(
        tx,
        this.deps.events,
        { id: req.conversationId, workspaceId: DIRECT_SPACE_ID, kind: 'direct' },
        [accountId],
        'DmRequestAnswered',
        now,
        { requestId: req.id, fromId: req.fromId, toId: accountId, state: 'declined' },
      );
    });
    return true;
  }

  /**
   * A request as the actor sees it: its sender is never told of a decline (it stays pending for
   * them, without an answer time; docs/direct-messages.md).
   */
  requestAsSeenBy(
    actor: Actor | null,
    request: Pick<DmRequestView, 'fromId' | 'state' | 'respondedAt'>,
  ): { state: DmRequestView['state']; respondedAt: number | null } {
    const me = actor && personOf(actor)?.accountId;
    if (request.state === 'declined' && me === request.fromId) {
      return { state: 'pending', respondedAt: null };
    }
    return { state: request.state, respondedAt: request.respondedAt };
  }

  /** Whether the actor may see a request's message preview: its sender and its recipient. */
  maySeePreview(actor: Actor | null, request: Pick<DmRequestView, 'fromId' | 'toId'>): boolean {
    const me = actor && personOf(actor)?.accountId;
    return me === request.fromId || me === request.toId;
  }

  /** The newest messages of DM request conversations, by conversation (see `newestMessagesOf`). */
  async previews(conversationIds: readonly string[]): Promise<Map<string, MessageView[]>> {
    const rows = await newestMessagesOf(this.deps.db.kysely, conversationIds, PREVIEW_MESSAGES);
    const out = new Map<string, MessageView[]>();
    for (const r of rows) out.set(r.conversationId, [...(out.get(r.conversationId) ?? []), r]);
    return out;
  }

  // ---- blocks --------------------------------------------------------------------------------

  async block(actor: Actor, userId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    if (userId === accountId) throw validation('you cannot block yourself');
    await this.requirePerson(userId);
    const now = this.now();
    await this.deps.db.transaction(async (tx) => {
      await insertBlock(tx.db, accountId, userId, now);
      await declineRequestsBetween(tx.db, accountId, userId, now);
    });
    return true;
  }

  async unblock(actor: Actor, userId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    if (!isId(userId)) return false;
    return deleteBlock(this.deps.db.kysely, accountId, userId);
  }

  /** The people the caller blocked, most recent first, a page at a time (contract: Pagination). */
  async blocked(actor: Actor, args: KeysetArgs = {}): Promise<BlockedPerson[]> {
    const accountId = actingAccountId(actor);
    const page = parseKeysetArgs(args, { max: 100, default: 100 });
    return keysetRows(await blockedBy(this.deps.db.kysely, accountId, page), page).map((b) => ({
      userId: b.blockedId,
      blockedAt: b.createdAt,
    }));
  }

  // ---- helpers -------------------------------------------------------------------------------

  async requirePerson(id: string): Promise<Person> {
    if (!isId(id)) throw notFound('user');
    const [p] = await findAccounts(this.deps.db.kysely, [id]);
    if (!p) throw notFound('user');
    return p;
  }

  async hasDevice(accountId: string): Promise<boolean> {
    return this.deps.devices.hasEncryptionDevice(accountId);
  }
}
