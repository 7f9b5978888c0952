import { useEffect } from 'preact/hooks';

import type { OpenMessage } from '../sw/service-worker.ts';
import { route } from '../state/router.ts';
import { phase } from '../state/session.ts';

import { jumpToMessage } from './jump-to-message.ts';

/**
 * Opens the message a notification named: from the service worker (a click while a tab is
 * open, `open-message`), or from the address it opened a new tab at (`/w/<s>/<c>?m=<id>&t=<root>`).
 */
export function useOpenMessageLinks(): void {
  useEffect(() => {
    const r = route.peek();
    const q = new URLSearchParams(location.search);
    const messageId = q.get('m');
    if (r.name === 'workspace' && r.conversationId && messageId) {
      history.replaceState(null, '', location.pathname);
      void jumpToMessage({
        id: messageId,
        conversationId: r.conversationId,
        threadRootId: q.get('t'),
      });
    }
    if (!('serviceWorker' in navigator)) return;
    const f = (e: MessageEvent) => {
      const o = e.data as Partial<OpenMessage> | null;
      if (o?.type !== 'open-message' || !o.conversationId || !o.messageId) return;
      if (phase.peek() !== 'in') return;
      void jumpToMessage({
        id: o.messageId,
        conversationId: o.conversationId,
        threadRootId: o.threadRootId ?? null,
      });
    };
    navigator.serviceWorker.addEventListener('message', f);
    return () => navigator.serviceWorker.removeEventListener('message', f);
  }, []);
}
