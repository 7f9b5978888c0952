import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';

import { gql } from '../api/graphql.ts';
import { PIN, UNPIN } from '../api/queries.ts';
import type { Conversation, Message } from '../api/types.ts';
import { me, workspaces } from '../state/store.ts';
import type { Timeline } from '../state/timeline.ts';
import { atBottom, sidePane } from '../state/view.ts';

import { editRequest } from './composer.tsx';
import { dayOf } from './format.tsx';
import { MessageItem, remove, type MessageActions } from './message-item.tsx';
import { ReportDialog } from './report-dialog.tsx';
import { showError } from './toasts.tsx';

const NEAR = 300;

/**
 * A conversation's (or thread's) messages, oldest at the top. Scrolling near either end loads
 * the next page; the timeline keeps a bounded window of pages, so a channel of any length scrolls
 * without loading it all. The view keeps the message under the reader's eye in place while pages
 * come and go, and follows new messages while it is at the bottom.
 */
export function TimelineView(p: {
  timeline: Timeline;
  label: string;
  conversation: Conversation;
  thread?: boolean;
  header?: ComponentChildren;
}) {
  const t = p.timeline;
  const items = t.items.value;
  const box = useRef<HTMLDivElement>(null);
  const anchor = useRef<{ id: string; offset: number } | null>(null);
  const stick = useRef(true);
  const [reporting, setReporting] = useState<Message | null>(null);
  const c = p.conversation;
  const ws = workspaces.value.find((w) => w.id === c.serverId);
  const staff = ws?.myRole === 'OWNER' || ws?.myRole === 'MODERATOR';

  const actions = useMemo<MessageActions>(
    () => ({
      edit: (m) => (editRequest.value = { conversationId: c.id, thread: !!p.thread, message: m }),
      staff,
      canWrite: c.isMember && !c.archived,
      threads: !p.thread,
      report: setReporting,
    }),
    [c.id, c.isMember, c.archived, staff, p.thread],
  );

  // Where the reader is: the first message at the top of the view, and whether at the bottom.
  const measure = () => {
    const el = box.current;
    if (!el) return;
    const bottomGap = el.scrollHeight - el.scrollTop - el.clientHeight;
    stick.current = bottomGap < 40 && t.live.value;
    if (!p.thread) atBottom.value = stick.current;
    const top = el.getBoundingClientRect().top;
    anchor.current = null;
    for (const node of el.querySelectorAll<HTMLElement>('article.msg')) {
      const r = node.getBoundingClientRect();
      if (r.bottom > top) {
        anchor.current = { id: node.dataset.id ?? '', offset: r.top - top };
        break;
      }
    }
    if (el.scrollTop < NEAR && !t.atStart && !t.loading.value) void t.loadOlder();
    if (bottomGap < NEAR && !t.live.value && !t.loading.value) void t.loadNewer();
  };

  // After the window changed: follow the bottom, or put the anchored message back in place.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    if (stick.current) {
      el.scrollTop = el.scrollHeight;
    } else if (anchor.current) {
      const node = el.querySelector<HTMLElement>(`[data-id="${anchor.current.id}"]`);
      if (node) {
        const delta = node.getBoundingClientRect().top - el.getBoundingClientRect().top;
        el.scrollTop += delta - anchor.current.offset;
      }
    }
    measure();
  }, [items]);

  useEffect(() => {
    stick.current = true;
    const el = box.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [t]);

  const myId = me.value?.id;
  const unread = p.thread ? 0 : c.unreadCount;
  const firstUnread = useMemo(() => {
    if (!unread) return null;
    let n = unread;
    for (let i = items.length - 1; i >= 0; i--) {
      if (items[i]!.author?.id !== myId && --n === 0) return items[i]!.id;
    }
    return null;
  }, [t, items.length === 0]);

  const rows: ComponentChildren[] = [];
  let prev: Message | undefined;
  for (const m of items) {
    const day = dayOf(m.createdAt);
    if (!prev || dayOf(prev.createdAt) !== day) {
      rows.push(
        <div class="day" role="separator" key={`d-${m.id}`}>
          <span>{day}</span>
        </div>,
      );
    }
    if (m.id === firstUnread) {
      rows.push(
        <div class="unread-line" role="separator" key="unread">
          <span>New messages</span>
        </div>,
      );
    }
    const compact =
      !!prev &&
      prev.author?.id === m.author?.id &&
      !prev.isDeleted &&
      Date.parse(m.createdAt) - Date.parse(prev.createdAt) < 5 * 60_000 &&
      dayOf(prev.createdAt) === day;
    rows.push(<MessageItem key={m.id} m={m} compact={compact} actions={actions} />);
    prev = m;
  }

  return (
    <div class="timeline-wrap">
      <div
        ref={box}
        class="timeline"
        role="log"
        aria-label={p.label}
        aria-busy={t.loading.value !== null}
        tabIndex={0}
        onScroll={measure}
        onKeyDown={(e) => keyNav(e, t, actions)}
      >
        {t.atStart && (p.header ?? <p class="start">This is the beginning of the conversation.</p>)}
        {t.loading.value === 'older' && <p class="loading">Loading earlier messages…</p>}
        {t.ready.value && !items.length && !p.header && (
          <p class="empty">No messages yet. Say hello!</p>
        )}
        {rows}
        {t.loading.value === 'newer' && <p class="loading">Loading newer messages…</p>}
        {t.loading.value === 'initial' && <p class="loading">Loading messages…</p>}
      </div>
      {(!t.live.value || (!stick.current && items.length > 0)) && (
        <button
          type="button"
          class="jump"
          onClick={() => {
            stick.current = true;
            if (!t.live.value) void t.open();
            else if (box.current) box.current.scrollTop = box.current.scrollHeight;
          }}
        >
          Jump to newest ↓
        </button>
      )}
      {reporting && <ReportDialog message={reporting} onClose={() => setReporting(null)} />}
    </div>
  );
}

/**
 * Keys in the message list: Up/Down (and Home/End) move between messages; on a message, E
 * edits (own), R opens its thread, P pins, Delete deletes, + reacts through its toolbar.
 */
function keyNav(e: KeyboardEvent, t: Timeline, actions: MessageActions): void {
  const target = e.target as HTMLElement;
  const list = (e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>('article.msg');
  if (!list.length) return;
  const current = target.closest<HTMLElement>('article.msg');
  const index = current ? Array.prototype.indexOf.call(list, current) : -1;
  const focus = (i: number) => {
    const el = list[Math.max(0, Math.min(list.length - 1, i))];
    el?.focus();
    el?.scrollIntoView({ block: 'nearest' });
  };
  if (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA') return;
  switch (e.key) {
    case 'ArrowUp':
      e.preventDefault();
      return focus(index < 0 ? list.length - 1 : index - 1);
    case 'ArrowDown':
      e.preventDefault();
      return focus(index < 0 ? list.length - 1 : index + 1);
    case 'Home':
      if (index < 0) return;
      e.preventDefault();
      return focus(0);
    case 'End':
      if (index < 0) return;
      e.preventDefault();
      return focus(list.length - 1);
  }
  if (!current || target !== current) return;
  const m = t.find(current.dataset.id ?? '');
  if (!m || m.isDeleted) return;
  const own = m.author?.id === me.value?.id;
  const k = e.key.toLowerCase();
  if (k === 'e' && own && actions.canWrite) {
    e.preventDefault();
    actions.edit(m);
  } else if (k === 'r' && actions.threads) {
    e.preventDefault();
    sidePane.value = { kind: 'thread', rootId: m.id };
  } else if (k === 'p' && actions.canWrite) {
    e.preventDefault();
    void gql(m.pinned ? UNPIN : PIN, { id: m.id }).catch(showError);
  } else if ((e.key === 'Delete' || e.key === 'Backspace') && (own || actions.staff)) {
    e.preventDefault();
    void remove(m);
  } else if (e.key === '+' && actions.canWrite) {
    e.preventDefault();
    current.querySelector<HTMLButtonElement>('.msg-actions button')?.click();
  }
}
