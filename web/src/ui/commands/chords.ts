// Key chords as the API writes them (docs/commands.md, Keybind: modifiers in the order Mod, Ctrl,
// Alt, Shift, Meta, then one key), read from key presses, and the chords a keybind may not take
// because the browser or the app already answers them.

export const MAC = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

const NAMED: Record<string, string> = {
  Enter: 'Enter',
  Escape: 'Escape',
  Tab: 'Tab',
  ' ': 'Space',
  Backspace: 'Backspace',
  Delete: 'Delete',
  ArrowUp: 'ArrowUp',
  ArrowDown: 'ArrowDown',
  ArrowLeft: 'ArrowLeft',
  ArrowRight: 'ArrowRight',
  '/': 'Slash',
  ',': 'Comma',
  '.': 'Period',
};

/**
 * The chord of a key press, or null for a modifier alone. Letters and digits come from the key's
 * place (`KeyK`), so Alt or a keyboard layout does not change them. Mod is ⌘ on a Mac and Ctrl
 * elsewhere.
 */
export function chordOf(e: KeyboardEvent): string | null {
  let key: string | null = null;
  const code = /^(Key([A-Z])|Digit([0-9]))$/.exec(e.code);
  if (code) key = code[2] ?? code[3] ?? null;
  else if (/^F([1-9]|1[0-2])$/.test(e.key)) key = e.key;
  else key = NAMED[e.key] ?? null;
  if (!key) return null;
  const mods: string[] = [];
  if (MAC ? e.metaKey : e.ctrlKey) mods.push('Mod');
  if (MAC && e.ctrlKey) mods.push('Ctrl');
  if (e.altKey) mods.push('Alt');
  if (e.shiftKey) mods.push('Shift');
  if (!MAC && e.metaKey) mods.push('Meta');
  return [...mods, key].join('+');
}

/** A chord for people: `Ctrl+Shift+K`, or `⌘⇧K` on a Mac. */
export function chordWords(chord: string): string {
  if (!MAC) return chord.replace(/^Mod\+/, 'Ctrl+');
  return chord
    .replace('Mod+', '⌘')
    .replace('Ctrl+', '⌃')
    .replace('Alt+', '⌥')
    .replace('Shift+', '⇧');
}

const BROWSER = [
  // Tabs, windows, the address bar, history, reload, find, print, save, zoom, editing.
  ...'TWNLRQPSFGHJDOUACVXZY0123456789'.split('').map((k) => `Mod+${k}`),
  'Mod+Shift+T',
  'Mod+Shift+N',
  'Mod+Shift+W',
  'Mod+Shift+R',
  'Mod+Shift+Z',
  'Mod+Shift+Delete',
  'Mod+Shift+I',
  'Mod+Shift+J',
  'Mod+Shift+C',
  'Mod+Shift+B',
  'Mod+Shift+O',
  'Mod+Tab',
  'Mod+Shift+Tab',
  'Alt+ArrowLeft',
  'Alt+ArrowRight',
  'Alt+D',
  'Alt+E',
  'Alt+F',
  'Alt+Home',
  'F1',
  'F3',
  'F5',
  'F6',
  'F7',
  'F11',
  'F12',
];

const APP = [
  'Mod+K',
  'Mod+Shift+F',
  'Mod+Slash',
  'Mod+B',
  'Mod+I',
  'Mod+E',
  'Mod+Shift+E',
  'Mod+Shift+X',
  'Alt+ArrowUp',
  'Alt+ArrowDown',
  'Alt+Shift+ArrowUp',
  'Alt+Shift+ArrowDown',
];

/** Why a chord cannot be bound here, in words; null when it is free. */
export function clashOf(chord: string): string | null {
  if (BROWSER.includes(chord)) return `${chordWords(chord)} belongs to the browser.`;
  if (APP.includes(chord)) return `${chordWords(chord)} is one of this app's own shortcuts.`;
  if (!chord.includes('+') && !/^F\d+$/.test(chord)) {
    return 'Add a modifier (Ctrl, Alt or Shift with another): a bare key fires while typing.';
  }
  if (/^Shift\+[A-Z0-9]$/.test(chord)) return 'Shift with a letter or digit is typing.';
  return null;
}
