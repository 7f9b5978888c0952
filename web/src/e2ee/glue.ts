// The first-load side of encrypted conversations: loads ./client.ts (and through it the MLS
// worker) the first time one is opened, started, or an MLS event arrives, and keeps pending
// invitations in the conversation list. Nothing of ts-mls is in the first-load script.
import { signal } from '@preact/signals';

import { gql } from '../api/graphql.ts';
import { INBOX } from '../api/queries.ts';
import type { Conversation } from '../api/types.ts';
import { conversations, putConversations } from '../state/store.ts';

import type * as Client from './client.ts';

let mod: Promise<typeof Client> | null = null;

/**
 * What this browser knows of its place in each encrypted conversation's group, by conversation:
 * whether it is in the group yet, and the devices on which the group's tree (what MLS encrypts
 * to) and the server's list (`mlsGroupState.deviceIds`) disagree. Set by ./client.ts after each
 * sync; shown in the conversation's header (./ui.tsx).
 */
export interface GroupHere {
  joined: boolean;
  /** Devices in the tree that the server does not list. */
  unlisted: string[];
  /** Devices the server lists that are not in the tree. */
  missing: string[];
}
export const groupsHere = signal<Record<string, GroupHere>>({});

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

const READY = `query E2eeReady { myDevices { current encryptionReady } myKeyIdentity { id } }`;

/**
 * After sign-in: a key account's device that is in encrypted conversations but not set up for
 * encryption yet (say a browser just linked) publishes its key packages now, so the members'
 * devices add it to those groups (`mlsGroupState.pendingAdditions`) and it reads what comes
 * after, even before it opens one. Never asks: a password account is asked when it needs to.
 */
export async function prepareEncryption(): Promise<void> {
  const mine = Object.values(conversations.value).some((c) => c.encrypted && c.isMember);
  if (!mine) return;
  const d = await gql<{
    myDevices: Array<{ current: boolean; encryptionReady: boolean }>;
    myKeyIdentity: { id: string } | null;
  }>(READY);
  if (!d.myKeyIdentity || d.myDevices.find((x) => x.current)?.encryptionReady !== false) return;
  await (await e2ee()).ensureDevice(false);
}
