import type { Resolvers } from '../../resolver-types.js';

import { addReaction } from './add-reaction.js';
import { deleteMessage } from './delete-message.js';
import { editMessage } from './edit-message.js';
import { forwardMessage } from './forward-message.js';
import { markRead } from './mark-read.js';
import { ForwardedFrom, LinkPreview, Message, MessageEdit } from './message-type.js';
import { messages } from './messages.js';
import { pinMessage } from './pin-message.js';
import { pinnedMessages } from './pinned-messages.js';
import { removeReaction } from './remove-reaction.js';
import { sendMessage } from './send-message.js';
import { threadReplies } from './thread-replies.js';
import { unpinMessage } from './unpin-message.js';

export const messageResolvers: Resolvers = {
  Query: { messages, threadReplies, pinnedMessages },
  Mutation: {
    sendMessage,
    forwardMessage,
    editMessage,
    deleteMessage,
    addReaction,
    removeReaction,
    pinMessage,
    unpinMessage,
    markRead,
  },
  Message,
  ForwardedFrom,
  MessageEdit,
  LinkPreview,
};
