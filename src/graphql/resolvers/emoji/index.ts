import type { Resolvers } from '../../resolver-types.js';

import { CustomEmoji } from './custom-emoji-type.js';
import { createCustomEmoji } from './create-custom-emoji.js';
import { customEmojis } from './custom-emojis.js';
import { deleteCustomEmoji } from './delete-custom-emoji.js';

export const emojiResolvers: Resolvers = {
  Query: { customEmojis },
  Mutation: { createCustomEmoji, deleteCustomEmoji },
  CustomEmoji,
};
