import { signal } from '@preact/signals';

import { gql } from '../api/graphql.ts';
import { REGISTER_PUSH, UNREGISTER_PUSH, WEB_PUSH_KEY } from '../api/notification-queries.ts';

// Web Push on this browser (docs/notifications.md, "Web Push"; docs/web-client.md). The service
// worker is registered on every load (it also keeps the app shell for offline use); the
// browser's permission is asked only when the person turns push on, never at first load.

/** `unsupported` (no service worker or push here), `blocked` (permission denied), `off`, `on`. */
export type PushState = 'unsupported' | 'blocked' | 'off' | 'on';
export const pushState = signal<PushState>('unsupported');

export function pushSupported(): boolean {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

/** Registers `/sw.js` (scope `/`); answers its registration, or null where there is none. */
export async function registerServiceWorker(): Promise<ServiceWorkerRegistration | null> {
  if (!('serviceWorker' in navigator)) return null;
  try {
    return await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  } catch {
    return null;
  }
}

async function currentSubscription(): Promise<PushSubscription | null> {
  if (!pushSupported()) return null;
  const reg = await navigator.serviceWorker.getRegistration('/');
  return (await reg?.pushManager.getSubscription()) ?? null;
}

/** Reads whether this browser pushes to the signed-in person now. */
export async function readPushState(): Promise<void> {
  if (!pushSupported()) {
    pushState.value = 'unsupported';
    return;
  }
  if (Notification.permission === 'denied') {
    pushState.value = 'blocked';
    return;
  }
  const sub = Notification.permission === 'granted' ? await currentSubscription() : null;
  pushState.value = sub ? 'on' : 'off';
}

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const b64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

async function register(sub: PushSubscription): Promise<void> {
  const json = sub.toJSON();
  await gql(REGISTER_PUSH, {
    input: { endpoint: sub.endpoint, p256dh: json.keys?.p256dh ?? '', auth: json.keys?.auth ?? '' },
  });
}

/**
 * Turns push on for this browser: asks the browser's permission (the person just asked for
 * it), subscribes with the server's VAPID key and registers the subscription with the server.
 */
export async function enablePush(): Promise<PushState> {
  if (!pushSupported()) return (pushState.value = 'unsupported');
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') {
    return (pushState.value = permission === 'denied' ? 'blocked' : 'off');
  }
  const reg = (await registerServiceWorker()) ?? (await navigator.serviceWorker.ready);
  const { webPushPublicKey } = await gql<{ webPushPublicKey: string }>(WEB_PUSH_KEY);
  let sub = await reg.pushManager.getSubscription();
  if (!sub) {
    sub = await reg.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: keyBytes(webPushPublicKey),
    });
  }
  await register(sub);
  return (pushState.value = 'on');
}

/** Turns push off for this browser: the server forgets the subscription, then the browser. */
export async function disablePush(): Promise<void> {
  const sub = await currentSubscription();
  if (sub) {
    await gql(UNREGISTER_PUSH, { endpoint: sub.endpoint });
    await sub.unsubscribe().catch(() => false);
  }
  pushState.value = pushSupported() ? 'off' : 'unsupported';
}

/** On signing out: this browser stops receiving the person's notifications. */
export async function forgetPushOnSignOut(): Promise<void> {
  try {
    await disablePush();
  } catch {
    // Signing out goes on; the server keeps the subscription until its push service refuses it.
  }
}

/** After signing in on a browser that pushes already: the subscription follows the person. */
export async function adoptPushOnSignIn(): Promise<void> {
  await readPushState();
  const sub = pushState.value === 'on' ? await currentSubscription() : null;
  if (sub) await register(sub).catch(() => undefined);
}
