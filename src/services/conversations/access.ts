import { assertCan, can, type Action, type Role } from '../../auth/policy.js';
import { AppError, forbidden, notFound } from '../../errors.js';
import type { ConversationMemberTable, ConversationTable } from '../../db/tables/conversations.js';
import { isId } from '../../lib/ids.js';
import { assertNotTimedOut, assertWritable } from '../authz/index.js';

import { INVITE_TTL_MS, truthy, type ConversationAccessRow } from './queries.js';

// Who may read and write a conversation (docs/messages.md, "Who may do what"). Pure: judges the
// row `findConversationAccess` read.

/** What the caller may do in a conversation they can see. */
export interface Access {
  row: ConversationAccessRow;
  /** A member (not a pending invitee, not a preview of a public channel). */
  isMember: boolean;
  /** The caller's workspace role; `member` in the direct space. */
  role: Role;
}

/** Whether the id could name a conversation at all (else NOT_FOUND without a query). */
export const plausibleId = (id: unknown): id is string => typeof id === 'string' && isId(id);

/**
 * What the read rule judges: the conversation, and the caller's place in it and in its
 * workspace. Every path that asks "may this person read this conversation" (a request, a report,
 * a pipeline's trigger, the live stream's cached facts) builds these and asks `readStanding`.
 */
export interface ReadFacts {
  kind: string;
  isPrivate: boolean;
  /** The caller's workspace role; null outside the workspace, and always in the direct space. */
  role: string | null;
  /** The caller's row in the conversation: a member, a pending invitee, or none. */
  state: string | null;
  /** When a pending invitation was made (it lapses after INVITE_TTL_MS). */
  invitedAt: number | null;
}

/**
 * Where the caller stands: a `member`; a workspace member who may `preview` a public channel
 * without joining it; `invited` (a pending invitee, who reads nothing until they accept); or
 * `none` (the conversation is not shown to them at all).
 */
export type ReadStanding = 'member' | 'preview' | 'invited' | 'none';

/**
 * The one read rule (docs/messages.md, "Who may do what"). A channel needs a workspace role;
 * a member reads; a pending invitee reads nothing (contract: the pending state answers
 * FORBIDDEN), and once the invitation lapsed they are as anyone else not in the conversation; a
 * public channel may be read by anyone of the workspace whose role may browse channels (not a
 * guest).
 */
export function readStanding(facts: ReadFacts, now: number): ReadStanding {
  const channel = facts.kind === 'channel';
  if (channel && facts.role === null) return 'none';
  if (facts.state === 'member') return 'member';
  if (facts.state === 'pending' && (facts.invitedAt ?? 0) > now - INVITE_TTL_MS) return 'invited';
  if (channel && !facts.isPrivate && can(facts.role as Role, 'channel:browse')) return 'preview';
  return 'none';
}

/** Whether the caller may read the conversation (a member, or a preview of a public channel). */
export function canRead(facts: ReadFacts, now: number): boolean {
  const standing = readStanding(facts, now);
  return standing === 'member' || standing === 'preview';
}

/** The read rule's facts of an access row (`findConversationAccess`). */
export function readFactsOf(row: ConversationAccessRow): ReadFacts {
  return {
    kind: row.kind,
    isPrivate: row.isPrivate === 1,
    role: row.role ?? null,
    state: row.memberState ?? null,
    invitedAt: row.memberJoinedAt ?? null,
  };
}

/** The read rule's facts of a conversation row, the caller's role and their member row if any. */
export function readFactsFrom(
  conv: Pick<ConversationTable, 'kind' | 'isPrivate'>,
  role: string | null,
  member: Pick<ConversationMemberTable, 'state' | 'joinedAt'> | undefined,
): ReadFacts {
  return {
    kind: conv.kind,
    isPrivate: conv.isPrivate === 1,
    role,
    state: member?.state ?? null,
    invitedAt: member?.joinedAt ?? null,
  };
}

/**
 * The caller may read: a member, or a workspace member previewing a public channel. NOT_FOUND
 * when the caller cannot see the conversation (never revealing that it exists); FORBIDDEN for a
 * pending invitee.
 */
export function assertReadable(row: ConversationAccessRow | undefined, now: number): Access {
  if (!row) throw notFound('conversation');
  const role: Role = (row.role as Role | null) ?? 'member';
  switch (readStanding(readFactsOf(row), now)) {
    case 'member':
      return { row, isMember: true, role };
    case 'preview':
      return { row, isMember: false, role };
    case 'invited':
      throw forbidden('accept the invitation to this encrypted conversation first');
    case 'none':
      throw notFound('conversation');
  }
}

/**
 * The caller may write (send, react, pin, edit, ...): readable, a member, the conversation not
 * archived, the caller not timed out, no block between the two people of a DIRECT conversation,
 * and the role allowing `action`.
 */
export function assertWritableBy(
  row: ConversationAccessRow | undefined,
  now: number,
  action: Action = 'message:post',
): Access {
  const access = assertReadable(row, now);
  if (!access.isMember) throw forbidden('join the channel to write in it');
  assertWritable(access.row);
  if (access.row.kind === 'channel') {
    assertNotTimedOut({ timedOutUntil: access.row.timedOutUntil ?? null }, now);
    assertCan(access.role, action);
  }
  if (truthy(access.row.blocked)) {
    throw new AppError('FORBIDDEN', 'your message could not be delivered to this conversation');
  }
  return access;
}
