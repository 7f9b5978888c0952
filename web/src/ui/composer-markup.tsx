import type { Conversation } from '../api/types.ts';

import { Markup } from './format.tsx';

/**
 * The message box's formatting keys: Ctrl (⌘ on a Mac) with B bold, I italic, Shift+X
 * strikethrough, E inline code, Shift+E a code block. Each wraps the selection in the markup
 * the messages show (web/src/markup/parse.ts), or puts the pair at the caret with the caret
 * between them. Answers the new text, or null for any other key (the browser keeps its own).
 */
export function markupKey(e: KeyboardEvent, el: HTMLTextAreaElement): string | null {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return null;
  const k = e.key.toLowerCase();
  const wrap =
    !e.shiftKey && k === 'b'
      ? ['**', '**']
      : !e.shiftKey && k === 'i'
        ? ['_', '_']
        : !e.shiftKey && k === 'e'
          ? ['`', '`']
          : e.shiftKey && k === 'x'
            ? ['~~', '~~']
            : e.shiftKey && k === 'e'
              ? ['```\n', '\n```']
              : null;
  if (!wrap) return null;
  e.preventDefault();
  const [open, close] = wrap as [string, string];
  const { selectionStart: a, selectionEnd: b, value } = el;
  const next = value.slice(0, a) + open + value.slice(a, b) + close + value.slice(b);
  el.value = next;
  el.setSelectionRange(a + open.length, b + open.length);
  return next;
}

/** What the message will look like once sent: the same renderer as the timeline. */
export function ComposerPreview(p: { text: string; c: Conversation; id: string }) {
  return (
    <div class="composer-preview" id={p.id} role="region" aria-label="Preview of your message">
      {p.text.trim() ? (
        <Markup
          text={p.text}
          mentions={{ userIds: [], channelIds: [], here: false }}
          serverId={p.c.serverId}
        />
      ) : (
        <p class="muted">Nothing to preview yet.</p>
      )}
    </div>
  );
}
