// The service worker, served as /sw.js with scope / (docs/web-client.md, "Notifications" and
// "Installable"). It shows Web Push notifications, opens the message on a click, and keeps the
// app shell (the page and its hashed files) so the app starts without a network and says it is
// offline instead of a browser error page. It never caches the API.
declare const self: ServiceWorkerGlobalScope;

/** Bumped when what is cached changes shape; older caches are deleted on activation. */
const SHELL = 'svc-shell-v1';

/** The decrypted push payload (docs/notifications.md, "Web Push"). */
interface PushPayload {
  id?: string;
  kind?: string;
  serverId?: string;
  conversationId?: string;
  messageId?: string;
  threadRootId?: string | null;
  title?: string;
  body?: string | null;
  encrypted?: boolean;
}

/** Where a notification leads: the app opens the message from this address (`?m=`). */
export interface OpenMessage {
  type: 'open-message';
  serverId: string;
  conversationId: string;
  messageId: string;
  threadRootId: string | null;
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(SHELL)
      .then((c) => c.add('/'))
      .catch(() => undefined)
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n !== SHELL).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin) return;
  if (req.mode === 'navigate') {
    // The page from the network (it is never cached by HTTP); the kept copy when offline.
    event.respondWith(
      fetch(req)
        .then((res) => {
          if (res.ok) {
            const copy = res.clone();
            void caches.open(SHELL).then((c) => c.put('/', copy));
          }
          return res;
        })
        .catch(async () => (await caches.match('/')) ?? Response.error()),
    );
  } else if (url.pathname.startsWith('/assets/')) {
    // Hashed names never change content: the kept copy first, else the network (then kept).
    event.respondWith(
      caches.match(req).then(
        (hit) =>
          hit ??
          fetch(req).then((res) => {
            if (res.ok) {
              const copy = res.clone();
              void caches.open(SHELL).then((c) => c.put(req, copy));
            }
            return res;
          }),
      ),
    );
  }
});

self.addEventListener('push', (event) => {
  let p: PushPayload = {};
  try {
    p = (event.data?.json() ?? {}) as PushPayload;
  } catch {
    // not JSON: show a plain notice below
  }
  const open: OpenMessage | null =
    p.serverId && p.conversationId && p.messageId
      ? {
          type: 'open-message',
          serverId: p.serverId,
          conversationId: p.conversationId,
          messageId: p.messageId,
          threadRootId: p.threadRootId ?? null,
        }
      : null;
  event.waitUntil(
    self.registration.showNotification(p.title ?? 'New message', {
      body: p.body ?? (p.encrypted ? 'Open the app to read it.' : ''),
      tag: p.id,
      icon: '/icon.svg',
      data: open,
    }),
  );
});

/** The address that opens a message in the app. */
function addressOf(o: OpenMessage): string {
  const q = new URLSearchParams({ m: o.messageId });
  if (o.threadRootId) q.set('t', o.threadRootId);
  return `/w/${encodeURIComponent(o.serverId)}/${encodeURIComponent(o.conversationId)}?${q}`;
}

/** An open tab of the app shows the message; without one, a new tab opens at it. */
async function openMessage(o: OpenMessage | null): Promise<void> {
  const tabs = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const tab = tabs.find((c) => c.focused) ?? tabs[0];
  if (tab && o) {
    tab.postMessage(o);
    await tab.focus().catch(() => undefined);
    return;
  }
  if (tab) {
    await tab.focus().catch(() => undefined);
    return;
  }
  await self.clients.openWindow(o ? addressOf(o) : '/');
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(openMessage((event.notification.data ?? null) as OpenMessage | null));
});
