import type { Explained } from '../api/error-words.ts';

// What goes wrong with a space on another server, in words (docs/federation.md, "The relay
// route"): the host is down or its answer did not verify, the host limits this server's calls,
// this session has no device key, or the relay refuses.

function seconds(n: unknown): string {
  const s = Math.max(1, Math.ceil(Number(n) || 1));
  if (s < 90) return `${s} second${s === 1 ? '' : 's'}`;
  const m = Math.ceil(s / 60);
  return `${m} minute${m === 1 ? '' : 's'}`;
}

/** Words for an error of a request to a host, or null when the usual words fit. */
export function remoteWords(
  code: string,
  message: string,
  e: Record<string, unknown>,
): Explained | null {
  const host = typeof e.hostServerId === 'string' ? e.hostServerId : null;
  if (!host && code !== 'NO_DEVICE_KEY') return null;
  switch (code) {
    case 'UPSTREAM_UNAVAILABLE':
      return {
        what: `${host ?? 'The server hosting this workspace'} could not be reached, or its answer could not be verified.`,
        todo: 'Try again in a few minutes. Your own server and its workspaces keep working.',
      };
    case 'RATE_LIMITED':
      return {
        what: `${host}, which hosts this workspace, asks to slow down.`,
        todo: `Wait ${seconds(e.retryAfterSeconds)} and try again.`,
      };
    case 'NO_DEVICE_KEY':
      return {
        what: 'Workspaces on other servers need a device key in this browser, and this session has none.',
        todo: 'Sign in with a key account on this browser (password sessions cannot reach other servers).',
      };
    case 'REMOTE_REFUSED':
      if (e.error === 'blocked') {
        return {
          what: `Your server’s operator does not allow ${host}.`,
          todo: 'Ask your server’s operator if you think this is a mistake.',
        };
      }
      if (e.error === 'unavailable' || e.error === 'timeout') {
        return {
          what: 'Your own server is having trouble passing requests on right now.',
          todo: `Wait ${seconds(e.retryAfterSeconds)} and try again.`,
        };
      }
      if (e.status === 401) {
        return {
          what: `${host} did not accept this browser’s signature.`,
          todo: 'Check that this device’s clock is right, then sign in again.',
        };
      }
      if (e.status === 403) {
        return {
          what: `Your server or ${host} refused to pass this on. (${message})`,
          todo: 'Sign in with this browser’s device key; ask your operator whether this server reaches other servers.',
        };
      }
      return {
        what: `Your server refused to pass this on to ${host}. (${message})`,
        todo: 'Check the invite link and try again.',
      };
    default:
      return null;
  }
}
