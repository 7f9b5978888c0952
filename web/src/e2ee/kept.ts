// What this browser decrypted before, read on the page's own thread: a page of an encrypted
// conversation whose every message was read here once is shown from IndexedDB (./vault.ts)
// without waiting for the MLS worker to start, load ts-mls and bring the group in step; the
// worker does that afterwards. Kept texts never change (a message's ciphertext is fixed), and
// each carries the device MLS found to have sent it, checked again here against the server's.
import type { Message, MessagePage } from '../api/types.ts';

import { b64, unpack } from './bytes.ts';
import { editTarget, takeEdit, withEdit } from './edits.ts';
import { withPlain } from './plain.ts';
import type { Decrypted } from './protocol.ts';
import { keptPlain } from './vault.ts';

export type Kept = Map<string, { body: string; opening: string; sender: string | null }>;

/** The kept texts of a page's messages for this browser's device. */
export async function readKept(deviceId: string, messageIds: string[]): Promise<Kept> {
  const out: Kept = new Map();
  for (const [id, bytes] of await keptPlain(deviceId, messageIds)) {
    const [opening, body, sender] = unpack(bytes);
    out.set(id, {
      opening: b64(opening!),
      body: new TextDecoder().decode(body),
      sender: sender ? new TextDecoder().decode(sender) : null,
    });
  }
  return out;
}

/**
 * A kept text as the worker answers it: shown only when the device MLS authenticated as its
 * sender is the one the server took it from (this device's own messages, kept when sent, carry
 * no sender).
 */
export function fromKept(
  m: Message,
  k: { body: string; opening: string; sender: string | null },
): Decrypted {
  if (k.sender !== null && k.sender !== (m.mls?.senderDeviceId ?? null)) {
    return { unreadable: 'sender' };
  }
  return { body: k.body, opening: k.opening };
}

/** Messages of a page that need a text: encrypted, not deleted. */
export const needsText = (m: Message) => !!m.ciphertext && !!m.mls && !m.isDeleted;

/**
 * The page as shown, from each message's decrypted form (by id): edits noted and left out (the
 * message they replace shows their text), and a deleted edit hidden where this browser read it.
 */
export function finishPage(page: MessagePage, read: Map<string, Message>, kept: Kept): MessagePage {
  const order = [...page.items].sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  for (const m of order) {
    const d = read.get(m.id);
    if (d) takeEdit(d);
  }
  const wasEdit = (m: Message) => m.isDeleted && !!editTarget(kept.get(m.id)?.body ?? '');
  const items = page.items
    .map((m) => read.get(m.id) ?? m)
    .filter((m) => !m.replaces && !wasEdit(m));
  return { ...page, items: items.map(withEdit) };
}

/** The page from kept texts alone, or null when one of its messages was never read here. */
export async function keptPage(deviceId: string, page: MessagePage): Promise<MessagePage | null> {
  const ids = page.items.filter((m) => needsText(m) || m.isDeleted).map((m) => m.id);
  const kept = await readKept(deviceId, ids);
  const read = new Map<string, Message>();
  for (const m of page.items) {
    if (!needsText(m)) continue;
    const k = kept.get(m.id);
    if (!k) return null;
    read.set(m.id, withPlain(m, fromKept(m, k)));
  }
  return finishPage(page, read, kept);
}
