import type { Message } from '../api/types.ts';
import { nameOf } from '../state/store.ts';

import { editTarget, textOf } from './edits.ts';
import type { Decrypted, Unreadable } from './protocol.ts';

// What a decrypted message shows: its text and what it replaces, or why it cannot be read.

/** The words shown in place of a message this browser cannot read. */
export function unreadableWords(why: Unreadable, authorId?: string | null): string {
  switch (why) {
    case 'sender':
      return `Hidden: this message was encrypted on a device that is not ${nameOf(authorId)}’s, so it is not shown as theirs.`;
    case 'before':
      return 'Sent before this browser joined the conversation, so it cannot be read here.';
    case 'franking':
      return 'Hidden: what this message says does not match its sender’s proof.';
    default:
      return 'This message could not be decrypted on this browser.';
  }
}

export function withPlain(m: Message, d: Decrypted): Message {
  if ('unreadable' in d) {
    return { ...m, text: null, unreadable: unreadableWords(d.unreadable, m.author?.id) };
  }
  const replaces = editTarget(d.body);
  return {
    ...m,
    text: textOf(d.body),
    unreadable: null,
    opening: d.opening,
    body: d.body,
    ...(replaces ? { replaces } : {}),
  };
}
