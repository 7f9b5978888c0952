import type { Resolvers } from '../../resolver-types.js';

import { acceptConversationInvite } from './accept-conversation-invite.js';
import { addConversationMembers } from './add-conversation-members.js';
import { conversation } from './conversation.js';
import { Conversation, ConversationKind } from './conversation-type.js';
import { createConversation } from './create-conversation.js';
import { declineConversationInvite } from './decline-conversation-invite.js';
import { leaveConversation } from './leave-conversation.js';
import { inboxConversations } from './inbox-conversations.js';

export const conversationResolvers: Resolvers = {
  Query: { inboxConversations, conversation },
  Mutation: {
    createConversation,
    addConversationMembers,
    acceptConversationInvite,
    declineConversationInvite,
    leaveConversation,
  },
  Conversation,
  ConversationKind,
};
