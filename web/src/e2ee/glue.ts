// The first-load side of encrypted conversations: loads ./client.ts (and through it the MLS
// worker) the first time one is opened, started, or an MLS event arrives, and keeps pending
// invitations in the conversation list. Nothing of ts-mls is in the first-load script.
import { gql } from '../api/graphql.ts';
import { INBOX } from '../api/queries.ts';
import type { Conversation } from '../api/types.ts';
import { putConversations } from '../state/store.ts';

import type * as Client from './client.ts';

let mod: Promise<typeof Client> | null = null;

/** The encrypted-conversation client, loaded on first use. */
export function e2ee(): Promise<typeof Client> {
  mod ??= import('./client.ts');
  return mod;
}

/**
 * Reads the inbox again for an invitation to an encrypted conversation (the conversation
 * itself answers FORBIDDEN to a pending invitee, so it cannot be read alone).
 */
export async function refreshInvitations(): Promise<void> {
  const d = await gql<{ inboxConversations: { items: Conversation[] } }>(INBOX);
  putConversations(d.inboxConversations.items.filter((c) => c.encrypted && !c.isMember));
}

/** An invitation not accepted yet: listed, never opened, no content and no unread count. */
export const isInvitation = (c: Conversation) => c.encrypted && !c.isMember && c.kind !== 'CHANNEL';
