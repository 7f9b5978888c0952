import type { ConversationTable } from '../../../db/tables/collaboration.js';
import { isPrivateConversation } from '../../../services/conversations/rows.js';
import { keyCursor } from '../../../services/paging/keyset.js';
import { optionalActor, type GraphqlContext } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';
import { loadUser } from '../accounts/loaders.js';

import {
  loadDmRequests,
  loadLastMessage,
  loadMembers,
  loadUnread,
  type MemberView,
} from './loaders.js';

// Conversation fields; the parent is a conversation row (channels' rows come from the channels
// area). Member lists, unread counts and last messages are loaded for a whole page at once.

type R = Resolver<ConversationTable>;
type Info = Parameters<R>[3];

const members = async (c: ConversationTable, ctx: GraphqlContext, info: Info) =>
  (await loadMembers(ctx, info, c.id)) ?? ([] as MemberView[]);

const memberIds = async (c: ConversationTable, ctx: GraphqlContext, info: Info) =>
  (await members(c, ctx, info)).filter((m) => m.state === 'member').map((m) => m.accountId);

/** Where the caller stands in the conversation: the service decides from the member list. */
const standing = async (c: ConversationTable, ctx: GraphqlContext, info: Info) =>
  ctx.services.conversations.reading.standing(optionalActor(ctx), await members(c, ctx, info));

export const Conversation = {
  serverId: ((c) => c.workspaceId) as R,
  cursor: ((c) => (c.kind === 'channel' ? keyCursor(c.createdAt, c.id) : null)) as R,
  isPrivate: ((c) => isPrivateConversation(c)) as R,
  encrypted: ((c) => c.encrypted === 1) as R,
  archived: ((c) => c.archivedAt !== null) as R,
  memberIds: ((c, _a, ctx, info) => memberIds(c, ctx, info)) as R,
  members: (async (c, _a, ctx, info) => {
    const users = await Promise.all(
      (await memberIds(c, ctx, info)).map((id) => loadUser(ctx, info, id)),
    );
    return users.filter((u) => u !== undefined);
  }) as R,
  memberCount: (async (c, _a, ctx, info) => (await memberIds(c, ctx, info)).length) as R,
  pendingMemberIds: (async (c, _a, ctx, info) =>
    (await members(c, ctx, info))
      .filter((m) => m.state === 'pending')
      .map((m) => m.accountId)) as R,
  isMember: (async (c, _a, ctx, info) => (await standing(c, ctx, info)) === 'member') as R,
  mlsGroup: (async (c, _a, ctx, info) =>
    ctx.services.conversations.reading.mlsGroup(
      optionalActor(ctx),
      c,
      await members(c, ctx, info),
    )) as R,
  unreadCount: (async (c, _a, ctx, info) =>
    (await standing(c, ctx, info)) === 'member'
      ? ((await loadUnread(ctx, info, c.id)) ?? 0)
      : 0) as R,
  lastMessage: (async (c, _a, ctx, info) =>
    (await standing(c, ctx, info)) === 'pending'
      ? null
      : ((await loadLastMessage(ctx, info, c.id)) ?? null)) as R,
  dmRequest: (async (c, _a, ctx, info) =>
    c.kind !== 'direct'
      ? null
      : ctx.services.conversations.reading.ownOpenRequest(
          optionalActor(ctx),
          c,
          (await loadDmRequests(ctx, info, c.id)) ?? [],
        )) as R,
};

/** Enum values as stored (`channel`, `direct`, `group`). */
export const ConversationKind = { CHANNEL: 'channel', DIRECT: 'direct', GROUP: 'group' };
