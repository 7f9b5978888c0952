import type { Message } from '../api/types.ts';
import { navigate } from '../state/router.ts';
import { refreshConversation } from '../state/session.ts';
import { conversations } from '../state/store.ts';
import { conversationTimeline, threadTimeline, type Timeline } from '../state/timeline.ts';
import { sidePane } from '../state/view.ts';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function settled(t: Timeline): Promise<void> {
  for (let i = 0; i < 100 && (t.loading.peek() || !t.ready.peek()); i++) await wait(50);
}

/**
 * Opens a message's conversation (and its thread for a reply), pages back until the message is
 * in the window, then scrolls to it and focuses it.
 */
export async function jumpToMessage(
  m: Pick<Message, 'id' | 'conversationId' | 'threadRootId'>,
): Promise<void> {
  const c = conversations.value[m.conversationId] ?? (await refreshConversation(m.conversationId));
  if (!c) return;
  navigate({ name: 'workspace', serverId: c.serverId, conversationId: c.id });
  // A closing dialog gives focus back where it was: let it, then move focus to the message.
  for (let i = 0; i < 40 && document.querySelector('dialog[open]'); i++) await wait(25);
  let t: Timeline;
  if (m.threadRootId) {
    sidePane.value = { kind: 'thread', rootId: m.threadRootId };
    t = threadTimeline(m.threadRootId);
  } else {
    t = conversationTimeline(c.id);
  }
  await settled(t);
  for (let i = 0; i < 20 && !t.find(m.id) && !t.atStart; i++) {
    await t.loadOlder();
    await settled(t);
  }
  for (let i = 0; i < 40; i++) {
    const el = document.getElementById(`m-${m.id}`);
    if (el) {
      el.scrollIntoView({ block: 'center' });
      el.focus({ preventScroll: true });
      el.classList.add('found');
      setTimeout(() => el.classList.remove('found'), 3000);
      return;
    }
    await wait(50);
  }
}
