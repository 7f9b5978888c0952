import type { ConversationTable } from '../../../db/tables/collaboration.js';
import type { GraphqlContext } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';
import {
  loadDmRequests,
  loadLastMessage,
  loadMembers,
  loadUnread,
  loadUser,
  type MemberView,
} from '../messages/loaders.js';

// Conversation fields; the parent is a conversation row (channels' rows come from the channels
// area). Member lists, unread counts and last messages are loaded for a whole page at once.

type R = Resolver<ConversationTable>;
type Info = Parameters<R>[3];

const members = async (c: ConversationTable, ctx: GraphqlContext, info: Info) =>
  (await loadMembers(ctx, info, c.id)) ?? ([] as MemberView[]);

const memberIds = async (c: ConversationTable, ctx: GraphqlContext, info: Info) =>
  (await members(c, ctx, info)).filter((m) => m.state === 'member').map((m) => m.accountId);

const isMember = async (c: ConversationTable, ctx: GraphqlContext, info: Info) => {
  const me = ctx.session?.accountId;
  return (await members(c, ctx, info)).some((m) => m.accountId === me && m.state === 'member');
};

const isPending = async (c: ConversationTable, ctx: GraphqlContext, info: Info) => {
  const me = ctx.session?.accountId;
  return (await members(c, ctx, info)).some((m) => m.accountId === me && m.state === 'pending');
};

export const Conversation = {
  serverId: ((c) => c.workspaceId) as R,
  isPrivate: ((c) => c.kind !== 'channel' || c.isPrivate === 1) as R,
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
  isMember: ((c, _a, ctx, info) => isMember(c, ctx, info)) as R,
  // Opaque for now: the conversation's id names its group for members of an encrypted one.
  mlsGroup: (async (c, _a, ctx, info) =>
    c.encrypted === 1 && (await isMember(c, ctx, info)) ? c.id : null) as R,
  unreadCount: (async (c, _a, ctx, info) =>
    (await isMember(c, ctx, info)) ? ((await loadUnread(ctx, info, c.id)) ?? 0) : 0) as R,
  lastMessage: (async (c, _a, ctx, info) =>
    (await isPending(c, ctx, info))
      ? null
      : ((await loadLastMessage(ctx, info, c.id)) ?? null)) as R,
  dmRequest: (async (c, _a, ctx, info) => {
    if (c.kind !== 'direct') return null;
    const me = ctx.session?.accountId;
    const requests = (await loadDmRequests(ctx, info, c.id)) ?? [];
    return requests.find((r) => r.fromId === me && r.state !== 'accepted') ?? null;
  }) as R,
};

/** Enum values as stored (`channel`, `direct`, `group`). */
export const ConversationKind = { CHANNEL: 'channel', DIRECT: 'direct', GROUP: 'group' };
