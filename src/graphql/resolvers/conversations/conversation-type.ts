import type { GraphQLResolveInfo } from 'graphql';

import {
  isPrivateConversation,
  type ConversationView,
} from '../../../services/conversations/index.js';
import { keyCursor, type KeysetArgs } from '../../../services/paging/index.js';
import { optionalActor, type GraphqlContext } from '../../context.js';
import type { EnumResolvers, TypeResolvers } from '../../generated/resolver-types.js';
import type { UserParent } from '../accounts/user.js';
import { loadUser } from '../accounts/loaders.js';

import {
  loadDmRequests,
  loadLastMessage,
  loadMemberCount,
  loadMemberPage,
  loadOwnMemberRows,
  loadPendingInvitees,
  loadUnread,
} from './loaders.js';

// Conversation fields; the parent is a conversation's view (channels' come from the channels
// area). Member pages, counts, unread counts and last messages are loaded for a whole page of
// conversations at once; no field reads a channel's whole member list.

type Info = GraphQLResolveInfo;

const memberPage = async (c: ConversationView, args: KeysetArgs, ctx: GraphqlContext, info: Info) =>
  (await loadMemberPage(ctx, info, c.id, args)) ?? [];

/** Where the caller stands in the conversation: the service decides from the caller's own row. */
const standing = async (c: ConversationView, ctx: GraphqlContext, info: Info) =>
  ctx.services.conversations.reading.standing(
    optionalActor(ctx),
    (await loadOwnMemberRows(ctx, info, c.id)) ?? [],
  );

export const Conversation: TypeResolvers<'Conversation'> = {
  serverId: (c) => c.workspaceId,
  cursor: (c) => (c.kind === 'channel' ? keyCursor(c.createdAt, c.id) : null),
  isPrivate: (c) => isPrivateConversation(c),
  archived: (c) => c.archivedAt !== null,
  memberIds: async (c, args, ctx, info) =>
    (await memberPage(c, args, ctx, info)).map((m) => m.accountId),
  members: async (c, args, ctx, info) => {
    const page = await memberPage(c, args, ctx, info);
    const users = await Promise.all(page.map((m) => loadUser(ctx, info, m.accountId)));
    return page.flatMap((m, i): UserParent[] => {
      const user = users[i];
      return user ? [{ ...user, listCursor: keyCursor(m.joinedAt, m.accountId) }] : [];
    });
  },
  memberCount: async (c, _a, ctx, info) => (await loadMemberCount(ctx, info, c.id)) ?? 0,
  pendingMemberIds: async (c, _a, ctx, info) =>
    ((await loadPendingInvitees(ctx, info, c.id)) ?? []).map((m) => m.accountId),
  isMember: async (c, _a, ctx, info) => (await standing(c, ctx, info)) === 'member',
  mlsGroup: async (c, _a, ctx, info) =>
    ctx.services.conversations.reading.mlsGroup(
      optionalActor(ctx),
      c,
      (await loadOwnMemberRows(ctx, info, c.id)) ?? [],
    ),
  unreadCount: async (c, _a, ctx, info) =>
    (await standing(c, ctx, info)) === 'member' ? ((await loadUnread(ctx, info, c.id)) ?? 0) : 0,
  lastMessage: async (c, _a, ctx, info) =>
    (await standing(c, ctx, info)) === 'pending'
      ? null
      : ((await loadLastMessage(ctx, info, c.id)) ?? null),
  dmRequest: async (c, _a, ctx, info) =>
    c.kind !== 'direct'
      ? null
      : ctx.services.conversations.reading.ownOpenRequest(
          optionalActor(ctx),
          c,
          (await loadDmRequests(ctx, info, c.id)) ?? [],
        ),
};

/** Enum values as stored (`channel`, `direct`, `group`). */
export const ConversationKind: EnumResolvers<'ConversationKind'> = {
  CHANNEL: 'channel',
  DIRECT: 'direct',
  GROUP: 'group',
};
