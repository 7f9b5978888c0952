import type { ConversationKind, ConversationTable } from '../../db/tables/conversations.js';

import { toRow } from './rows.js';

// The conversation view the area answers, and its mapping from a row (or an access row).

/** A conversation. Timestamps in ms. */
export interface ConversationView {
  id: string;
  workspaceId: string;
  kind: ConversationKind;
  /** Channel or group name; null for a direct conversation. */
  name: string | null;
  topic: string | null;
  /** A private channel (members only); false for direct and group conversations. */
  isPrivate: boolean;
  /** End-to-end encrypted. */
  encrypted: boolean;
  archivedAt: number | null;
  createdBy: string;
  createdAt: number;
  /** Newest message time (or creation), for inbox order. */
  lastActivityAt: number;
}

/** The view of a conversation row (an access row's own membership columns are left behind). */
export function toConversationView(r: ConversationTable): ConversationView {
  return { ...toRow(r), isPrivate: r.isPrivate === 1, encrypted: r.encrypted === 1 };
}

/** Private as clients see it: a private channel, and every direct or group conversation. */
export function isPrivateConversation(c: Pick<ConversationView, 'kind' | 'isPrivate'>): boolean {
  return c.kind !== 'channel' || c.isPrivate;
}
