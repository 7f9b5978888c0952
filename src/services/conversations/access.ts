import { assertCan, type Action, type Role } from '../../auth/policy.js';
import { AppError, forbidden, notFound } from '../../errors.js';
import { isId } from '../../lib/ids.js';
import { assertNotTimedOut, assertWritable } from '../workspaces/rules.js';

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
 * The caller may read: a member, or a non-guest workspace member previewing a public channel.
 * NOT_FOUND when the caller cannot see the conversation (never revealing that it exists);
 * FORBIDDEN for a pending invitee of an encrypted conversation.
 */
export function assertReadable(row: ConversationAccessRow | undefined, now: number): Access {
  if (!row) throw notFound('conversation');
  const direct = row.kind !== 'channel';
  if (!direct && row.role === null) throw notFound('conversation');
  const role: Role = (row.role as Role | null) ?? 'member';
  if (row.memberState === 'member') return { row, isMember: true, role };
  if (row.memberState === 'pending') {
    if ((row.memberJoinedAt ?? 0) <= now - INVITE_TTL_MS) throw notFound('conversation');
    throw forbidden('accept the invitation to this encrypted conversation first');
  }
  if (!direct && row.isPrivate === 0 && role !== 'guest') return { row, isMember: false, role };
  throw notFound('conversation');
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
