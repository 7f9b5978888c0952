import type { Message } from '../api/types.ts';

// Edits of encrypted messages, as this browser read them. The server cannot change ciphertext
// (`editMessage` refuses an encrypted message), so an edit is a new encrypted message of the
// current epoch whose body names the message it replaces, as Matrix's `m.replace`: readers show
// the replaced message with the edit's text, marked edited, and never the edit on its own.

/** The text of a decrypted body (`{"text", ...}`), or nothing. */
export function textOf(body: string): string {
  try {
    const v = JSON.parse(body) as { text?: unknown };
    return typeof v.text === 'string' ? v.text : '';
  } catch {
    return '';
  }
}

/** The message an edit replaces (`{"text", "edit": <messageId>}`), or null for a message. */
export function editTarget(body: string): string | null {
  try {
    const v = JSON.parse(body) as { edit?: unknown };
    return typeof v.edit === 'string' ? v.edit : null;
  } catch {
    return null;
  }
}

/** The latest edit this browser read of each encrypted message, by the message it replaces. */
const latestEdit = new Map<string, Message>();
/** Every edit read of each message, by the message it replaces (deleted with it). */
const editIdsOf = new Map<string, Set<string>>();

/** Notes an edit this browser read or sent; the latest (by the server's time) wins. */
export function takeEdit(e: Message): void {
  if (!e.replaces) return;
  const ids = editIdsOf.get(e.replaces) ?? new Set<string>();
  ids.add(e.id);
  editIdsOf.set(e.replaces, ids);
  const prev = latestEdit.get(e.replaces);
  if (!prev || prev.createdAt <= e.createdAt) latestEdit.set(e.replaces, e);
}

/** The edits this browser read of a message (to delete with it). */
export function editsOf(messageId: string): string[] {
  return [...(editIdsOf.get(messageId) ?? [])];
}

/**
 * The message with its latest edit's text: only an edit by the message's own author (the server
 * names the author of each, and MLS checked the sending device), made after it, while the
 * message is not deleted.
 */
export function withEdit(m: Message): Message {
  const e = latestEdit.get(m.id);
  if (!e || m.isDeleted || !e.author || e.author.id !== m.author?.id) return m;
  if (e.createdAt < m.createdAt || e.body === undefined || e.opening === undefined) return m;
  return {
    ...m,
    text: e.text,
    unreadable: null,
    editedAt: e.createdAt,
    editedBy: { id: e.id, body: e.body, opening: e.opening },
  };
}
