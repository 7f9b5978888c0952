import { conflictWords, validationWords, type Explained } from './error-words.ts';
import { ApiError, HTTP, NETWORK, NO_CODE, PLUGIN_CODE } from './graphql.ts';
import { remoteWords } from '../remote/words.ts';

export type { Explained } from './error-words.ts';

function seconds(n: unknown): string {
  const s = Math.max(1, Math.ceil(Number(n) || 1));
  if (s < 90) return `${s} second${s === 1 ? '' : 's'}`;
  const m = Math.ceil(s / 60);
  return `${m} minute${m === 1 ? '' : 's'}`;
}

function when(iso: unknown): string {
  const d = new Date(String(iso));
  return Number.isNaN(d.getTime()) ? 'later' : d.toLocaleString();
}

const FEATURE_NAMES: Record<string, string> = {
  attachments: 'File uploads',
  link_previews: 'Link previews',
  email: 'Email',
  custom_emoji: 'Custom emoji',
  workspace_plugins: 'Workspace plugins',
  ai_commands: 'Assistant commands',
};

/**
 * Turns any error into words and a next step. The server's message is shown where it is written
 * for people (VALIDATION, CONFLICT: it says which rule); the code decides the rest.
 */
export function explain(err: unknown, context: 'signin' | 'default' = 'default'): Explained {
  if (!(err instanceof ApiError)) {
    return {
      what: 'Something went wrong in this page.',
      todo: 'Reload the page. If it happens again, tell the server operator what you were doing.',
    };
  }
  const e = err.extensions;
  const remote = remoteWords(err.code, err.message, e);
  if (remote) return remote;
  const ref = err.requestId ? ` Mention reference ${err.requestId}.` : '';
  switch (err.code) {
    case NETWORK:
      return {
        what: 'The server could not be reached.',
        todo: 'Check your connection. The app keeps trying and catches up when it is back.',
      };
    case 'UNAUTHENTICATED':
      return context === 'signin'
        ? {
            what: err.message.includes('challenge')
              ? 'The sign-in took too long and expired.'
              : 'That username and password (or key) were not accepted.',
            todo: 'Check the username and password and try again. Key accounts sign in with their device key.',
          }
        : { what: 'You are signed out.', todo: 'Sign in again to continue.' };
    case 'FORBIDDEN':
      return {
        what: `You are not allowed to do that here. (${err.message})`,
        todo: 'Ask an owner or a moderator of this workspace if you think you should be.',
      };
    case 'NOT_FOUND':
      return {
        what: 'That no longer exists, or you cannot see it.',
        todo: 'It may have been deleted, or you may have been removed. Go back and reload the list.',
      };
    case 'VALIDATION':
      return validationWords(err.message);
    case 'CONFLICT':
      return conflictWords(err.message);
    case 'CONFIRMATION_STALE':
      return {
        what: 'That confirmation was used already or is older than 5 minutes.',
        todo: 'Run the command again and confirm it when asked.',
      };
    case 'CONFIRMATION_FAILED':
      return {
        what: 'That confirmation was for another command, argument or place.',
        todo: 'Run the command again and confirm it when asked.',
      };
    case 'EMAIL_TAKEN':
      return {
        what: 'Another account already uses that email address.',
        todo: 'Sign in to that account, or use another address.',
      };
    case 'INVALID_TOKEN':
      return {
        what: 'This invite or link is not valid: it is unknown, used up or revoked.',
        todo: 'Ask whoever sent it for a new one.',
      };
    case 'EXPIRED_TOKEN':
      return { what: 'This invite or link has expired.', todo: 'Ask for a new one.' };
    case 'RATE_LIMITED':
      return {
        what: 'Too many attempts in a short time.',
        todo: `Wait ${seconds(e.retryAfterSeconds)} and try again.`,
      };
    case 'TOO_MANY_SUBSCRIPTIONS':
      return {
        what: 'This page holds as many live updates as the server allows.',
        todo: 'Close other tabs of this app and reload.',
      };
    case 'CONVERSATION_ARCHIVED':
      return {
        what: 'This channel is archived: it can be read but not written to.',
        todo: 'Ask a moderator to unarchive it if the conversation should go on.',
      };
    case 'TIMED_OUT':
      return {
        what: `You are timed out in this workspace until ${when(e.until)}.`,
        todo: 'You can read, but not write, until then.',
      };
    case 'FEATURE_DISABLED': {
      const name = FEATURE_NAMES[String(e.feature)] ?? String(e.feature ?? 'This feature');
      return {
        what: `${name} is switched off on this server.`,
        todo: 'Ask the server operator to enable it.',
      };
    }
    case 'UPSTREAM_UNAVAILABLE':
      return {
        what: 'Another server this depends on could not be reached.',
        todo: 'Try again in a few minutes.',
      };
    case 'UNAVAILABLE':
    case 'TIMEOUT':
      return {
        what: 'The server is having trouble right now.',
        todo: `Try again in a minute.${ref}`,
      };
    case HTTP:
      if (e.error === 'blocked') {
        return {
          what: 'This network address is blocked by the server operator.',
          todo: 'Contact the operator if you think this is a mistake.',
        };
      }
      if (e.error === 'origin_not_allowed') {
        return {
          what: 'This page is not allowed to talk to the server from where it is hosted.',
          todo: 'Open the app from the server’s own address.',
        };
      }
      if (e.status === 413) {
        return {
          what: 'The file is larger than this server accepts.',
          todo: 'Choose a smaller file.',
        };
      }
      if (e.status === 422) {
        // Only a plugin bundle is refused this way; the reason names the place (docs/plugins.md).
        return {
          what: `The server refused this plugin bundle: ${err.message}.`,
          todo: 'Correct the bundle at that place and upload it again.',
        };
      }
      if (e.status === 415) {
        return {
          what: 'The server does not accept this kind of file here.',
          todo: 'Send another type of file, or put it in an archive.',
        };
      }
      return {
        what: `The server refused the request (${String(e.status)}).`,
        todo: 'Reload the page and try again.',
      };
    case PLUGIN_CODE:
      // The sandbox's own words: which plugin, which command, what stopped it.
      return {
        what: err.message,
        todo: 'If it keeps happening, tell whoever manages this workspace’s plugins.',
      };
    case NO_CODE:
      if (/csrf/i.test(err.message)) {
        return {
          what: 'Your sign-in in this tab is out of date.',
          todo: 'Reload the page; sign in again if asked.',
        };
      }
      return {
        what: 'This app and the server disagree about the request.',
        todo: 'Reload the page: the server may have been updated.',
      };
    default:
      return {
        what: 'The server failed to do that.',
        todo: `Try again. If it keeps failing, tell the server operator.${ref}`,
      };
  }
}

/** One line: the explanation and the next step. */
export function explainLine(err: unknown, context?: 'signin' | 'default'): string {
  const x = explain(err, context);
  return `${x.what} ${x.todo}`;
}
