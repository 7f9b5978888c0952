import type { Db } from '../../db/database.js';
import type { BusEvent } from '../../events/bus.js';
import { workspaceTopic, type Audience, type EventPayload } from '../../events/catalog.js';
import { notFound } from '../../errors.js';
import { isId } from '../../lib/ids.js';
import { LiveStream, type TopicPolicy, type Verdict } from '../../events/live-stream.js';

import { canRead, membershipsAmong, type ReadFacts } from '../conversations/index.js';
import { findWorkspaceSubscription } from '../workspaces/index.js';

/** Events after which who is in a conversation may have changed: reread for local subscribers. */
const CONVERSATION_MEMBERSHIP_EVENTS = new Set([
  'MemberAddedToConversation',
  'MemberRemovedFromConversation',
  'ChannelCreated',
  'ConversationCreated',
  'MlsMembershipChanged',
]);

/** Accounts per membership query (the same chunk size as the session recheck). */
const CHUNK = 500;

/**
 * Shared by every workspace stream of one topic on this process: after an event that may change
 * who is in a conversation, one query (per 500 local subscribers) rereads which of them are
 * members now, and stages the answer on each stream. Events that name the one person whose
 * membership changed (a channel joined or left, an invitation, a removal) stage it on that
 * person's streams without a query, as do the workspace's own membership events (joins, leaves,
 * role changes), which carry what changed in their payload.
 */
const workspacePolicy: TopicPolicy = {
  prepare(event, streams) {
    if (!CONVERSATION_MEMBERSHIP_EVENTS.has(event.type)) return;
    const conversationId = (event.payload as Partial<EventPayload>).conversationId;
    if (typeof conversationId !== 'string' || streams.length === 0) return;
    const own = streams.filter((s): s is WorkspaceStream => s instanceof WorkspaceStream);
    if (own.length === 0) return;
    const named = namedMember(event);
    if (named) {
      // The event names the one person whose membership changed: nobody else's needs a read.
      for (const s of own) if (s.accountId === named.userId) s.stage(conversationId, named.place);
      return;
    }
    const accounts = [...new Set(own.map((s) => s.accountId))];
    const db = own[0]!.db;
    return (async () => {
      const found = new Map<string, Place>();
      for (let i = 0; i < accounts.length; i += CHUNK) {
        for (const m of await membershipsAmong(
          db.kysely,
          conversationId,
          accounts.slice(i, i + CHUNK),
        ))
          found.set(m.accountId, { state: m.state, invitedAt: m.joinedAt });
      }
      for (const s of own) s.stage(conversationId, found.get(s.accountId) ?? NOT_IN);
    })();
  },
};

/** The subscriber's place in one conversation: a member, a pending invitee, or neither. */
interface Place {
  state: string | null;
  invitedAt: number | null;
}

const NOT_IN: Place = { state: null, invitedAt: null };

/**
 * A join, leave, invitation or removal names its person (`userId`): a member afterwards unless
 * removed, or a pending invitee (not a member until they accept) since the event.
 */
function namedMember(event: BusEvent): { userId: string; place: Place } | null {
  if (event.type !== 'MemberAddedToConversation' && event.type !== 'MemberRemovedFromConversation')
    return null;
  const payload = event.payload as { userId?: unknown; state?: unknown };
  if (typeof payload.userId !== 'string') return null;
  if (event.type === 'MemberRemovedFromConversation')
    return { userId: payload.userId, place: NOT_IN };
  const place: Place =
    payload.state === 'pending'
      ? { state: 'pending', invitedAt: event.at }
      : { state: 'member', invitedAt: null };
  return { userId: payload.userId, place };
}

type Role = 'owner' | 'moderator' | 'member' | 'guest';

/**
 * workspaceEvents(serverId): the events of one workspace this member may see, by each event's
 * audience (src/events/catalog.ts). Ends after the member's own MemberLeft (left, removed, or
 * the workspace deleted) and after WorkspaceDeleted.
 */
export class WorkspaceStream extends LiveStream {
  readonly topic: string;
  readonly policy = workspacePolicy;
  private staged: { conversationId: string; place: Place } | null = null;

  private constructor(
    readonly db: Db,
    readonly accountId: string,
    readonly workspaceId: string,
    /** The direct space: no workspace-wide events; conversations by membership only. */
    private readonly direct: boolean,
    private role: Role | null,
    private readonly conversations: Set<string>,
    /** The conversations the subscriber is a pending invitee of, with when they were invited. */
    private readonly invitations: Map<string, number>,
    /** Public channels' events only for those the subscriber is in (`joinedChannelsOnly`). */
    private readonly joinedOnly: boolean,
    private readonly now: () => number,
  ) {
    super();
    this.topic = workspaceTopic(workspaceId);
  }

  /** Authorizes and loads the subscriber's access; NOT_FOUND for a non-member. */
  static async open(
    db: Db,
    accountId: string,
    workspaceId: string,
    opts: { joinedChannelsOnly: boolean; now: () => number },
  ): Promise<WorkspaceStream> {
    if (!isId(workspaceId)) throw notFound('workspace');
    const {
      access: row,
      conversationIds,
      invitations,
    } = await findWorkspaceSubscription(db.kysely, workspaceId, accountId);
    const direct = row?.isDirect === 1;
    if (!row || (!direct && !row.role)) throw notFound('workspace');
    return new WorkspaceStream(
      db,
      accountId,
      workspaceId,
      direct,
      direct ? null : (row.role as Role),
      new Set(conversationIds),
      new Map(invitations.map((i) => [i.conversationId, i.invitedAt])),
      opts.joinedChannelsOnly,
      opts.now,
    );
  }

  /** Records what the topic policy read about one conversation; applied by the next decide. */
  stage(conversationId: string, place: Place): void {
    this.staged = { conversationId, place };
  }

  decide(event: BusEvent): Verdict {
    const payload = event.payload as Partial<EventPayload>;
    // Who is in a conversation counts as it is after the change (the person added to a private
    // channel sees their addition; the person removed is told by an event addressed to them);
    // the role as it was before (the member who left or was removed sees their MemberLeft).
    this.applyStaged();
    const shown = this.visible(payload.audience, event.type, payload);
    this.applyRole(event.type, payload);
    const ends =
      event.type === 'WorkspaceDeleted' ||
      (event.type === 'MemberLeft' && payload.userId === this.accountId);
    if (ends) return shown ? 'deliver-end' : 'end';
    return shown ? 'deliver' : 'skip';
  }

  private applyStaged(): void {
    if (!this.staged) return;
    const { conversationId, place } = this.staged;
    if (place.state === 'member') this.conversations.add(conversationId);
    else this.conversations.delete(conversationId);
    if (place.state === 'pending') this.invitations.set(conversationId, place.invitedAt ?? 0);
    else this.invitations.delete(conversationId);
    this.staged = null;
  }

  private applyRole(type: string, payload: Partial<EventPayload>): void {
    if (payload.userId !== this.accountId || this.direct) return;
    if (type === 'MemberLeft') this.role = null;
    else if ((type === 'MemberRoleChanged' || type === 'MemberJoined') && payload.role) {
      this.role = String(payload.role).toLowerCase() as Role;
    }
  }

  private visible(
    audience: Audience | undefined,
    type: string,
    payload: Partial<EventPayload>,
  ): boolean {
    if (!audience || typeof audience !== 'object') return false;
    switch (audience.kind) {
      case 'workspace':
        return !this.direct && this.role !== null;
      case 'channel':
        // Joined channels only: a public channel's events reach its members, and the person
        // who just left it their own leaving.
        if (this.joinedOnly && !this.conversations.has(audience.conversationId)) {
          return (
            this.inSpace() &&
            type === 'MemberRemovedFromConversation' &&
            payload.userId === this.accountId
          );
        }
        return this.mayRead(audience.conversationId, false);
      case 'conversation':
        return this.mayRead(audience.conversationId, true);
      case 'users':
        return Array.isArray(audience.userIds) && audience.userIds.includes(this.accountId);
      default:
        return false;
    }
  }

  private inSpace(): boolean {
    return this.direct || this.role !== null;
  }

  /** The read rule (conversations/access.ts) over what this stream knows of the subscriber. */
  private mayRead(conversationId: string, isPrivate: boolean): boolean {
    const invitedAt = this.invitations.get(conversationId);
    const facts: ReadFacts = {
      // A channel's events come on a workspace's topic; the direct space has no channels.
      kind: this.direct ? 'group' : 'channel',
      isPrivate,
      role: this.direct ? null : this.role,
      state: this.conversations.has(conversationId)
        ? 'member'
        : invitedAt !== undefined
          ? 'pending'
          : null,
      invitedAt: invitedAt ?? null,
    };
    return canRead(facts, this.now());
  }
}
