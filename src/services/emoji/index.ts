// The emoji area's surface: what other areas and the edges use of it (docs/architecture.md,
// "Area surfaces"). The area's own files import each other directly, never this file.
export {
  EMOJI_MAX_BYTES,
  EMOJI_MAX_SIDE,
  EMOJI_PER_WORKSPACE,
  EmojiService,
  checkEmojiName,
  newEmojiRow,
} from './emoji-service.js';
export type { CustomEmojiView, EmojiLookup } from './emoji-service.js';
export { countCustomEmoji, findCustomEmoji, insertCustomEmoji } from './queries.js';
