// The first-load side of encrypted conversations: loads ./client.ts (and through it the MLS
// worker) the first time one is opened, started, or an MLS event arrives, and keeps pending
// invitations in the conversation list. Nothing of ts-mls is in the first-load script.
import { signal } from '@preact/signals';

import { gql } from '../api/graphql.ts';
import { INBOX } from '../api/queries.ts';
import type { Conversation, MessagePage } from '../api/types.ts';
import { conversations, me, putConversations } from '../state/store.ts';

import type * as Client from './client.ts';
import { keptPage } from './kept.ts';
import { warmVault } from './vault.ts';

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

const READY = `query E2eeReady { myDevices { id current encryptionReady } myKeyIdentity { id } }`;

interface Ready {
  myDevices: Array<{ id: string; current: boolean; encryptionReady: boolean }>;
  myKeyIdentity: { id: string } | null;
}

let ready: { userId: string; answer: Promise<Ready> } | null = null;

/** Whether this session's device is set up for encryption, read once per person. */
function readiness(): Promise<Ready> {
  const userId = me.value?.id ?? '';
  if (ready?.userId !== userId) {
    const answer = gql<Ready>(READY);
    ready = { userId, answer };
    answer.catch(() => {
      if (ready?.answer === answer) ready = null;
    });
  }
  return ready.answer;
}

/** Called once the device is set up here (./client.ts), so the next read asks again. */
export function deviceSetUp(): void {
  ready = null;
}

/**
 * After sign-in: a key account's device that is in encrypted conversations but not set up for
 * encryption yet (say a browser just linked) publishes its key packages now, so the members'
 * devices add it to those groups (`mlsGroupState.pendingAdditions`) and it reads what comes
 * after, even before it opens one. Never asks: a password account is asked when it needs to.
 */
export async function prepareEncryption(): Promise<void> {
  const mine = Object.values(conversations.value).some((c) => c.encrypted && c.isMember);
  ready = null;
  if (!mine) return;
  warmVault();
  const d = await readiness();
  if (!d.myKeyIdentity || d.myDevices.find((x) => x.current)?.encryptionReady !== false) return;
  await (await e2ee()).ensureDevice(false);
}

/**
 * Called as a page of a conversation is asked for: for an encrypted one, the kept texts' database
 * opens (and the device's readiness is read) while the request is on its way.
 */
export function aboutToRead(conversationId: string): void {
  if (!conversations.peek()[conversationId]?.encrypted) return;
  warmVault();
  readiness().catch(() => undefined);
}

/**
 * A page of an encrypted conversation as the person reads it. When this browser read each of
 * its messages before, the page is shown from those kept texts at once (./kept.ts), and the MLS
 * client brings the group in step afterwards; otherwise the MLS client decrypts it. The client
 * starts loading either way.
 */
export async function readablePage(
  conversationId: string,
  page: MessagePage,
): Promise<MessagePage> {
  const client = e2ee();
  const shown = await (async () => {
    const d = await readiness();
    const here = d.myKeyIdentity ? d.myDevices.find((x) => x.current && x.encryptionReady) : null;
    return here ? keptPage(here.id, page) : null;
  })().catch(() => null);
  if (!shown) return (await client).decryptPage(conversationId, page);
  void client.then((c) => c.sync(conversationId, false)).catch(() => undefined);
  return shown;
}
