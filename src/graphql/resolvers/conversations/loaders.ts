import type { GraphQLResolveInfo } from 'graphql';

import type { DmRequestView, MemberListRow } from '../../../services/conversations/index.js';
import type { MessageView } from '../../../services/messages/index.js';
import type { KeysetArgs } from '../../../services/paging/index.js';
import { optionalActor, requireActor, type GraphqlContext } from '../../context.js';
import { group, loader } from '../../loaders.js';

// The conversations area's batched lookups for the fields of a page (graphql/loaders.ts).

export interface MemberView {
  accountId: string;
  state: 'member' | 'pending';
}

/**
 * A page of a conversation's members, batched with the other conversations of the page that ask
 * with the same paging arguments (each set of arguments is a loader of its own).
 */
export const loadMemberPage = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
  args: KeysetArgs,
) =>
  loader<MemberListRow[]>(
    ctx,
    info,
    `memberPage\u0000${args.after ?? ''}\u0000${args.before ?? ''}\u0000${args.limit ?? ''}`,
    (ids) => ctx.services.conversations.reading.memberPages(ids, args),
  ).load(conversationId);

export const loadMemberCount = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<number>(ctx, info, 'memberCount', (ids) =>
    ctx.services.conversations.reading.memberCounts(ids),
  ).load(conversationId);

/** The caller's own row in a conversation (membership or live invitation), if any. */
export const loadOwnMemberRows = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MemberView[]>(ctx, info, 'ownMemberRows', async (ids) =>
    group(
      await ctx.services.conversations.reading.ownMemberRows(optionalActor(ctx), ids),
      'conversationId',
    ),
  ).load(conversationId);

export const loadPendingInvitees = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MemberView[]>(ctx, info, 'pendingInvitees', async (ids) =>
    group(await ctx.services.conversations.reading.pendingInvitees(ids), 'conversationId'),
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
  loader<MessageView>(ctx, info, 'lastMessage', async (ids) => {
    const rows = await ctx.services.messages.reading.lastMessages(ids);
    return new Map(rows.map((r) => [r.conversationId, r]));
  }).load(conversationId);

export const loadDmRequests = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<DmRequestView[]>(ctx, info, 'dmRequests', async (ids) =>
    group(await ctx.services.conversations.reading.dmRequestsFor(ids), 'conversationId'),
  ).load(conversationId);
