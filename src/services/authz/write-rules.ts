import type { Role } from '../../auth/policy.js';
import { AppError } from '../../errors.js';

// Pure write rules shared by every area that writes into a workspace (channels, conversations,
// messages, reactions, pins, ...). They take the rows they judge and "now"; no database.

/** A person's place in a workspace. */
export interface Membership {
  role: Role;
  /** Milliseconds; the member may not write before then. Null when not timed out. */
  timedOutUntil: number | null;
}

/** TIMED_OUT with `until` (RFC 3339) while a timeout runs; a past timeout is ignored. */
export function assertNotTimedOut(membership: Pick<Membership, 'timedOutUntil'>, now: number) {
  const until = membership.timedOutUntil;
  if (until !== null && until > now) {
    const iso = new Date(until).toISOString();
    throw new AppError('TIMED_OUT', `you are timed out in this workspace until ${iso}`, {
      until: iso,
    });
  }
}

/** CONVERSATION_ARCHIVED for any write into an archived channel or conversation. */
export function assertWritable(conversation: { archivedAt: number | null }) {
  if (conversation.archivedAt !== null) {
    throw new AppError(
      'CONVERSATION_ARCHIVED',
      'this conversation is archived and read-only; unarchive it first',
    );
  }
}
