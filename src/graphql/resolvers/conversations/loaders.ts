import type { GraphQLResolveInfo } from 'graphql';

import type { DmRequestTable, MessageTable } from '../../../db/tables/collaboration.js';
import { requireActor, type GraphqlContext } from '../../context.js';
import { group, loader } from '../../loaders.js';

// The conversations area's batched lookups for the fields of a page (graphql/loaders.ts).

export interface MemberView {
  accountId: string;
  state: 'member' | 'pending';
}

export const loadMembers = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MemberView[]>(ctx, info, 'members', async (ids) =>
    group(await ctx.services.conversations.reading.membersOf(ids), 'conversationId'),
  ).load(conversationId);

export const loadUnread = (ctx: GraphqlContext, info: GraphQLResolveInfo, conversationId: string) =>
  loader<number>(ctx, info, 'unread', (ids) =>
    ctx.services.conversations.reading.unreadCounts(requireActor(ctx), ids),
  ).load(conversationId);

export const loadLastMessage = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MessageTable>(ctx, info, 'lastMessage', async (ids) => {
    const rows = await ctx.services.conversations.reading.lastMessages(ids);
    return new Map(rows.map((r) => [r.conversationId, r]));
  }).load(conversationId);

export const loadDmRequests = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<DmRequestTable[]>(ctx, info, 'dmRequests', async (ids) =>
    group(await ctx.services.conversations.reading.dmRequestsFor(ids), 'conversationId'),
  ).load(conversationId);
