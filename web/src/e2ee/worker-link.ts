// The page's link to the MLS worker (./mls-worker.ts), and the locks that keep one device's MLS
// state moving one step at a time across every tab of this browser profile.
//
// Each tab runs its own worker, and all of them keep the device's state in the same IndexedDB
// (./vault.ts). Two tabs advancing one group at once would fork it: both would encrypt with the
// same ratchet generation, or one would commit on an epoch the other already left. So every
// operation on a conversation's group (a sync, a page decrypted, a send, a Commit applied) runs
// under a Web Lock named for the device and the conversation, held across its requests to the
// server, and the worker reads the group again from IndexedDB when the lock is taken. Key
// packages are made and published under one lock for the device.
import type { MlsRequest } from './protocol.ts';

let worker: Worker | null = null;
let seq = 0;
const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

/** One request to the worker; it answers them in the order they were sent. */
export function call<T>(req: MlsRequest): Promise<T> {
  if (!worker) {
    worker = new Worker(new URL('./mls-worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (ev: MessageEvent<{ id: number; result?: unknown; error?: string }>) => {
      const w = waiting.get(ev.data.id);
      waiting.delete(ev.data.id);
      if (ev.data.error !== undefined) w?.reject(new Error(ev.data.error));
      else w?.resolve(ev.data.result);
    };
  }
  const id = ++seq;
  return new Promise<T>((resolve, reject) => {
    waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    worker!.postMessage({ id, req });
  });
}

// Without Web Locks (an old browser), operations are at least one at a time in this tab.
const chains = new Map<string, Promise<unknown>>();

function chained<T>(name: string, f: () => Promise<T>): Promise<T> {
  const before = chains.get(name) ?? Promise.resolve();
  const run = before.then(f, f);
  const tail = run.catch(() => undefined);
  chains.set(name, tail);
  void tail.then(() => {
    if (chains.get(name) === tail) chains.delete(name);
  });
  return run;
}

/** Runs `f` holding the lock `name`, shared by every tab of this origin. */
export function exclusive<T>(name: string, f: () => Promise<T>): Promise<T> {
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  if (!locks) return chained(name, f);
  return locks.request(name, () => f()) as Promise<T>;
}

/**
 * Runs `f` as the only operation on this device's group of one conversation, in any tab; the
 * worker drops what it held of the group first, so `f` starts from the state the last holder of
 * the lock saved.
 */
export function locked<T>(deviceId: string, conversationId: string, f: () => Promise<T>) {
  return exclusive(`svc-mls:${deviceId}:${conversationId}`, async () => {
    await call({ op: 'forget', conversationId });
    return f();
  });
}

/** The lock for setting up this account's device here: making and publishing key packages. */
export const packagesLock = (userId: string) => `svc-mls:${userId}:packages`;
