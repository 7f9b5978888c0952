import { validation } from '../../errors.js';

// Message text rules: size, mentions and reaction emoji (docs/messages.md). Pure.

// In `u` mode a paired surrogate is one code point, so only a lone one matches.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The text to store, trimmed: VALIDATION for a non-string, for text that is empty once trimmed
 * (unless `mayBeEmpty`: a message that carries files), and for more than `maxBytes` UTF-8 bytes
 * once trimmed (the message names the cap).
 */
export function checkText(
  value: unknown,
  maxBytes: number,
  builtIn = false,
  mayBeEmpty = false,
): string {
  if (typeof value !== 'string') throw validation('text must be a string');
  // Lone surrogates cannot be stored as UTF-8 without loss: refuse rather than mangle.
  if (LONE_SURROGATE.test(value)) throw validation('text is not valid Unicode');
  const text = value.trim();
  if (text === '' && !mayBeEmpty) throw validation('a message needs some text');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) {
    throw validation(
      `message text is ${bytes} bytes; the limit is ${maxBytes} UTF-8 bytes (${builtIn ? 'the built-in maximum; SVC_LIMIT_MESSAGE_BYTES can lower it' : 'SVC_LIMIT_MESSAGE_BYTES'})`,
      { limit: maxBytes },
    );
  }
  return text;
}

/** What a text mentions, before the names are looked up. */
export interface ParsedMentions {
  usernames: string[];
  channels: string[];
  here: boolean;
  /** `@channel` or `@everyone`: every member of the conversation. */
  channel: boolean;
}

/** Stored mentions (the `mentions` JSON column). */
export interface StoredMentions {
  users: string[];
  channels: string[];
  here: boolean;
  /** `@channel` or `@everyone` (absent in messages stored before it was parsed). */
  channel?: boolean;
}

export const NO_MENTIONS: StoredMentions = { users: [], channels: [], here: false, channel: false };

// A mention starts the text or follows a character that cannot be part of a name, so that
// e-mail addresses (`a@b.org`) and URL fragments (`/#top`) are not mentions. A person of another
// server is named as they are known here, `@<name>@<server id>` (docs/federation.md), the
// server id a DNS name or IPv4 address with an optional port.
const USER_RE =
  /(?<![\p{L}\p{N}_.@/-])@([\p{L}\p{N}_.-]{1,64}(?:@[A-Za-z0-9.-]{1,253}(?::\d{1,5})?)?)/gu;
const CHANNEL_RE = /(?<![\p{L}\p{N}_&/#-])#([\p{L}\p{N}_-]{1,80})/gu;
const MAX_MENTIONS = 50;

/**
 * Finds `@username` (`@name@server` for a person of another server), `#channel`, `@here` and
 * `@channel` (or `@everyone`) in a text (at most 50 names of each kind). The three keywords are
 * reserved usernames, so none is ever a person.
 */
export function parseMentions(text: string): ParsedMentions {
  const usernames = new Set<string>();
  let here = false;
  let channel = false;
  for (const m of text.matchAll(USER_RE)) {
    // A trailing dot ends a sentence, not a name.
    const name = (m[1] as string).replace(/[.-]+$/, '').toLowerCase();
    if (name === 'here') here = true;
    else if (name === 'channel' || name === 'everyone') channel = true;
    else if (name && usernames.size < MAX_MENTIONS) usernames.add(name);
  }
  const channels = new Set<string>();
  for (const m of text.matchAll(CHANNEL_RE)) {
    const name = (m[1] as string).replace(/-+$/, '').toLowerCase();
    if (name && channels.size < MAX_MENTIONS) channels.add(name);
  }
  return { usernames: [...usernames], channels: [...channels], here, channel };
}

export function readMentions(json: string | null): StoredMentions {
  if (!json) return NO_MENTIONS;
  try {
    const v = JSON.parse(json) as Partial<StoredMentions>;
    return {
      users: Array.isArray(v.users) ? v.users : [],
      channels: Array.isArray(v.channels) ? v.channels : [],
      here: v.here === true,
      channel: v.channel === true,
    };
  } catch {
    return NO_MENTIONS;
  }
}

// Built at run time: the `v` flag (Unicode sets, \p{RGI_Emoji}) is newer than the compile target.
const RGI_EMOJI = new RegExp('^\\p{RGI_Emoji}$', 'v');
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** A custom emoji in a reaction: `:name:`, 2 to 32 of `a-z 0-9 _ + -` (services/emoji). */
const CUSTOM_EMOJI = /^:([a-z0-9_+-]{2,32}):$/;

/**
 * The emoji to store for a reaction: exactly one Unicode emoji (a fully qualified RGI emoji,
 * ZWJ sequences, skin tones, flags and keycaps included), or a custom emoji written `:name:`
 * (case-folded; whether the workspace has it is the caller's check, see `customEmojiName`). A
 * pictograph sent without its emoji variation selector (U+FE0F) is stored with it, so "❤" and
 * "❤️" count as one. Anything else answers VALIDATION.
 */
export function checkEmoji(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) {
    throw validation(REACTION_RULE);
  }
  const folded = value.toLowerCase();
  if (CUSTOM_EMOJI.test(folded)) return folded;
  const graphemes = [...segmenter.segment(value)];
  if (graphemes.length !== 1) throw validation(REACTION_RULE);
  if (RGI_EMOJI.test(value)) return value;
  if (PICTOGRAPH.test(value) && RGI_EMOJI.test(`${value}\uFE0F`)) return `${value}\uFE0F`;
  throw validation(REACTION_RULE);
}

const REACTION_RULE = 'a reaction is one Unicode emoji or a custom emoji written :name:';

/** The name of a custom emoji reaction (as `checkEmoji` returns it), or null for Unicode. */
export function customEmojiName(emoji: string): string | null {
  return CUSTOM_EMOJI.exec(emoji)?.[1] ?? null;
}
