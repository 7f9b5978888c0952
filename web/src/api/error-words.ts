// The words for the server's CONFLICT and VALIDATION messages (written for people: they say
// which rule or what clashed): each gets a next step. Pure, so the unit test reads it directly.

/** An error as a person reads it: what happened, and what they can do about it. */
export interface Explained {
  what: string;
  todo: string;
}

/**
 * What to do after each CONFLICT the server answers (its messages say what clashed, in words for
 * people); the first pattern that matches gives the next step.
 */
const CONFLICT_STEPS: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [
    /the username "([^"]*)" is taken/,
    (m) => `Choose another username, such as ${suggestUsernames(m[1] ?? '').join(' or ')}.`,
  ],
  [/already has a channel named #(\S+)/, (m) => `Choose another name, or open #${m[1]}.`],
  [/already has an emoji named (:\S+:)/, (m) => `Choose another name, or remove ${m[1]} first.`],
  [/upload token|attachment/, () => 'Attach the file again and send.'],
  [/the message was deleted/, () => 'It can no longer be changed; nothing else was lost.'],
  [/taken at the same moment|at the same time/, () => 'Try again in a moment.'],
  [
    /device key is registered already/,
    () =>
      'This browser already has that key: sign in with it, or add this browser from the sign-in screen.',
  ],
  [/is already blocked/, () => 'Unblock it first to block it again with other terms.'],
  [/the offer /, () => 'Start adding the device again from the new browser.'],
  [/pending already/, () => 'Cancel the pending one first, or wait for it to finish.'],
  [/plugin .* is already in this workspace/, () => 'Update the installed plugin instead.'],
  [/identity key was rotated already/, () => 'Reload to see your current keys.'],
  [/belongs to an account already/, () => 'Sign in to that account with its key instead.'],
];

/** The words for a CONFLICT: what clashed, and the step its kind calls for. */
export function conflictWords(message: string): Explained {
  for (const [pattern, step] of CONFLICT_STEPS) {
    const m = pattern.exec(message);
    if (m) return { what: sentence(message.split('; ')[0] ?? message), todo: step(m) };
  }
  const advised = splitAdvice(message);
  if (advised) return advised;
  return {
    what: sentence(message),
    todo: 'Someone changed this at the same time: reload to see it as it is now, then try again.',
  };
}

/** A server message of the form "what happened; what to do" keeps its own advice. */
function splitAdvice(message: string): Explained | null {
  const i = message.indexOf('; ');
  if (i < 0) return null;
  return { what: sentence(message.slice(0, i)), todo: sentence(message.slice(i + 2)) };
}

/** The words for a VALIDATION: the server's rule, and its own advice when it gives one. */
export function validationWords(message: string): Explained {
  return (
    splitAdvice(message) ?? {
      what: sentence(message),
      todo: 'Change what you entered and try again.',
    }
  );
}

/**
 * Two variants of a taken username that keep its rules (letters, digits and single separators,
 * ending in a letter or digit). They are not checked: the API has no "is this name free" query,
 * so the person tries one.
 */
export function suggestUsernames(name: string): string[] {
  const base =
    name
      .replace(/[^A-Za-z0-9_.-]/g, '')
      .slice(0, 28)
      .replace(/[._-]+$/, '') || 'me';
  const n = 2 + Math.floor(Math.random() * 97);
  return [`${base}${n}`, `${base}_${new Date().getFullYear() % 100}`];
}

function sentence(s: string): string {
  const t = s.trim();
  if (!t) return 'That was not accepted.';
  const first = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}
