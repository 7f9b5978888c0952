// Hosts left behind (docs/web-client.md, "Hosts with nothing for the person"). The relay lists
// every host it ever forwarded a request to for the person (`myRemoteHosts`), also after they
// left its workspaces, and the app would ask each of them for four lists at every load. A host
// that answered every list with nothing (no workspace, no direct conversation, no DM request)
// is quiet: it is not asked at loads for a day, then asked again. A live event from it, or
// joining one of its workspaces, wakes it at once. Kept per account in this browser.

/** How long a host found with nothing for the person is left out of the loads. */
export const QUIET_FOR_MS = 24 * 60 * 60 * 1000;

const KEY = (username: string) => `svc-remote-quiet:${username.toLowerCase()}`;

function read(username: string): Record<string, number> {
  try {
    const v = JSON.parse(localStorage.getItem(KEY(username)) ?? '{}') as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
    return Object.fromEntries(
      Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number'),
    );
  } catch {
    return {};
  }
}

function write(username: string, quiet: Record<string, number>): void {
  if (Object.keys(quiet).length) localStorage.setItem(KEY(username), JSON.stringify(quiet));
  else localStorage.removeItem(KEY(username));
}

/** The hosts found with nothing for the person within the last day: not asked at a load. */
export function quietHosts(username: string, now = Date.now()): Set<string> {
  const quiet = read(username);
  return new Set(Object.keys(quiet).filter((h) => now - (quiet[h] as number) < QUIET_FOR_MS));
}

/**
 * After a load: each host asked that answered every list with nothing is quiet from `now`; a
 * host with something, or one that did not answer (it may have something), is not. Answers the
 * hosts found quiet.
 */
export function noteQuietHosts(
  username: string,
  asked: readonly string[],
  withSomething: ReadonlySet<string>,
  unanswered: ReadonlySet<string>,
  now = Date.now(),
): Set<string> {
  const quiet = read(username);
  const found = new Set<string>();
  for (const host of asked) {
    if (withSomething.has(host) || unanswered.has(host)) delete quiet[host];
    else {
      quiet[host] = now;
      found.add(host);
    }
  }
  write(username, quiet);
  return found;
}

/** A host has something for the person again: it is asked at the next load. */
export function wakeHost(username: string, host: string): void {
  const quiet = read(username);
  if (!(host in quiet)) return;
  delete quiet[host];
  write(username, quiet);
}
