import type { CustomEmojiView } from '../../../services/emoji/index.js';
import { keyCursor } from '../../../services/paging/index.js';
import type { Resolver } from '../../resolver-types.js';

/** An emoji's place in `customEmojis`, to pass as `after` or `before`. */
export const CustomEmoji = {
  cursor: ((e) => keyCursor(e.createdAt, e.id)) as Resolver<CustomEmojiView>,
};
