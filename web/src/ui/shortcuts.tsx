import { useEffect, useRef, useState } from 'preact/hooks';

import type { Conversation } from '../api/types.ts';
import { navigate, route } from '../state/router.ts';
import { conversations, titleOf, workspaces } from '../state/store.ts';
import { searchOpen, sidePane } from '../state/view.ts';

import { Dialog } from './dialog.tsx';

/**
 * The keyboard shortcuts of the app. Kept in one table so the help screen lists exactly what
 * works. The person's own keybinds (Settings, Commands) are listed there, not here.
 */
export const SHORTCUTS: [string, string][] = [
  ['Ctrl+K (⌘K)', 'Jump to a conversation'],
  ['Ctrl+Shift+F (⌘⇧F)', 'Search messages'],
  ['Alt+↑ / Alt+↓', 'Previous / next conversation'],
  ['Alt+Shift+↑ / Alt+Shift+↓', 'Previous / next conversation with unread messages'],
  ['Ctrl+/ (⌘/) or ? ', 'Show these shortcuts'],
  ['Escape', 'Close the side pane, a picker or a dialog; cancel an edit'],
  ['Enter / Shift+Enter', 'Send / new line in the message box'],
  ['↑ in an empty message box', 'Edit your last message'],
  ['@ / :', 'Suggest people / emoji while typing'],
  ['Ctrl+B · Ctrl+I · Ctrl+Shift+X', 'Bold, italic, strikethrough in the message box (⌘ on a Mac)'],
  ['Ctrl+E · Ctrl+Shift+E', 'Inline code, code block in the message box'],
  ['↑ / ↓ in the message list', 'Move between messages'],
  ['E · R · P · + · Delete', 'On a message: edit, reply in thread, pin, react, delete'],
];

function ordered(): Conversation[] {
  const r = route.value;
  const serverId = r.name === 'workspace' ? r.serverId : null;
  const list = Object.values(conversations.value).filter(
    (c) => c.serverId === serverId && c.isMember,
  );
  const w = workspaces.value.find((x) => x.id === serverId);
  return w?.isDirect
    ? list.sort((a, b) => (a.lastActivityAt < b.lastActivityAt ? 1 : -1))
    : list.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
}

function step(delta: number, unreadOnly: boolean): void {
  const r = route.value;
  if (r.name !== 'workspace') return;
  const list = ordered();
  const at = list.findIndex((c) => c.id === r.conversationId);
  for (let i = 1; i <= list.length; i++) {
    const c = list[(at + delta * i + list.length * i) % list.length];
    if (!c) return;
    if (!unreadOnly || c.unreadCount > 0 || c.mentionCount > 0) {
      navigate({ name: 'workspace', serverId: c.serverId, conversationId: c.id });
      return;
    }
  }
}

export function useShortcuts(open: (d: 'switcher' | 'help') => void): void {
  useEffect(() => {
    const f = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      const typing = /^(INPUT|TEXTAREA|SELECT)$/.test((e.target as HTMLElement).tagName);
      if (mod && e.shiftKey && e.key.toLowerCase() === 'f') {
        e.preventDefault();
        searchOpen.value = true;
      } else if (mod && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        open('switcher');
      } else if ((mod && e.key === '/') || (!typing && e.key === '?')) {
        e.preventDefault();
        open('help');
      } else if (e.altKey && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
        e.preventDefault();
        step(e.key === 'ArrowUp' ? -1 : 1, e.shiftKey);
      } else if (e.key === 'Escape' && !typing && sidePane.value && !e.defaultPrevented) {
        sidePane.value = null;
      }
    };
    addEventListener('keydown', f);
    return () => removeEventListener('keydown', f);
  }, []);
}

/** Ctrl+K: type part of a name, arrows to choose, Enter to open. */
export function QuickSwitcher({ onClose }: { onClose: () => void }) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const all = Object.values(conversations.value).filter((c) => c.isMember);
  const ql = q.toLowerCase();
  const hits = all
    .map((c) => ({ c, title: titleOf(c), ws: workspaces.value.find((w) => w.id === c.serverId) }))
    .filter((x) => x.title.toLowerCase().includes(ql))
    .sort((a, b) => (a.c.lastActivityAt < b.c.lastActivityAt ? 1 : -1))
    .slice(0, 12);
  const go = (i: number) => {
    const hit = hits[i];
    if (!hit) return;
    onClose();
    navigate({ name: 'workspace', serverId: hit.c.serverId, conversationId: hit.c.id });
  };
  return (
    <Dialog title="Jump to a conversation" onClose={onClose}>
      <input
        ref={input}
        type="search"
        aria-label="Conversation name"
        placeholder="Channel or person"
        aria-controls="switcher-list"
        aria-activedescendant={hits[active] ? `sw-${active}` : undefined}
        value={q}
        onInput={(e) => {
          setQ(e.currentTarget.value);
          setActive(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            const n = Math.max(1, hits.length);
            setActive((active + (e.key === 'ArrowDown' ? 1 : -1) + n) % n);
          } else if (e.key === 'Enter') {
            e.preventDefault();
            go(active);
          }
        }}
      />
      <ul class="plain switcher" id="switcher-list" role="listbox" aria-label="Conversations">
        {hits.map((h, i) => (
          <li
            key={h.c.id}
            id={`sw-${i}`}
            role="option"
            aria-selected={i === active}
            class={i === active ? 'active' : ''}
            onClick={() => go(i)}
          >
            <span dir="auto">{h.title}</span>{' '}
            <span class="muted">{h.ws?.isDirect ? 'Direct messages' : h.ws?.name}</span>
            {h.c.unreadCount > 0 && <span class="badge">{h.c.unreadCount}</span>}
          </li>
        ))}
        {!hits.length && <li class="hint">No conversation by that name.</li>}
      </ul>
    </Dialog>
  );
}

export function ShortcutHelp({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      <table class="shortcuts">
        <thead>
          <tr>
            <th scope="col">Keys</th>
            <th scope="col">What they do</th>
          </tr>
        </thead>
        <tbody>
          {SHORTCUTS.map(([k, what]) => (
            <tr key={k}>
              <td>
                <kbd>{k}</kbd>
              </td>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
