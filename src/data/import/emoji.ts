import { get } from 'node-emoji';

import { checkEmoji } from '../../services/messages/index.js';

// Reactions in Slack and Mattermost exports are short names (`+1`, `tada`, `thumbsup::skin-tone-3`);
// svc stores the Unicode emoji itself, or `:name:` for a custom emoji.

/** Names both products use that the emoji name list spells otherwise. */
const ALIASES: Record<string, string> = {
  thumbsup: '+1',
  thumbsdown: '-1',
  simple_smile: 'slightly_smiling_face',
  slightly_smiling: 'slightly_smiling_face',
  white_check: 'white_check_mark',
  heavy_plus_sign: 'heavy_plus_sign',
};

/** `skin-tone-2` to `skin-tone-6`: the five Fitzpatrick modifiers. */
const TONES = ['\u{1F3FB}', '\u{1F3FC}', '\u{1F3FD}', '\u{1F3FE}', '\u{1F3FF}'];

function valid(emoji: string): string | null {
  try {
    return checkEmoji(emoji);
  } catch {
    return null;
  }
}

/**
 * The emoji to store for a reaction named `name` in an export: the Unicode emoji when the name
 * is a standard one (with its skin tone when one is given and the emoji takes it), else `:name:`
 * as a custom emoji of the workspace (kept even though the image did not come along: svc shows
 * a reaction whose custom emoji is missing by its name). Null for a name svc cannot store.
 */
export function reactionEmoji(name: string): string | null {
  let known = seen.get(name);
  if (known === undefined) {
    known = lookup(name);
    if (seen.size < 10_000) seen.set(name, known);
  }
  return known;
}

/** Names looked up so far: an export uses a few hundred names many thousand times. */
const seen = new Map<string, string | null>();

function lookup(name: string): string | null {
  const [base = '', ...modifiers] = name.trim().toLowerCase().replace(/^:|:$/g, '').split('::');
  const unicode = get(ALIASES[base] ?? base);
  if (unicode) {
    const tone = modifiers.map((m) => /^skin-tone-([2-6])$/.exec(m)).find((m) => m !== null);
    if (tone) {
      const toned = valid(unicode.replace(/\uFE0F/g, '') + TONES[Number(tone[1]) - 2]);
      if (toned) return toned;
    }
    const plain = valid(unicode);
    if (plain) return plain;
  }
  return valid(`:${base}:`);
}
