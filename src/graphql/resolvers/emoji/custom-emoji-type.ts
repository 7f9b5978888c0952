import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** An emoji's place in `customEmojis`, to pass as `after` or `before`. */
export const CustomEmoji: TypeResolvers<'CustomEmoji'> = {
  cursor: (e) => keyCursor(e.createdAt, e.id),
};
