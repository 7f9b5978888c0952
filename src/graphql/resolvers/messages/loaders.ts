import type { GraphQLResolveInfo } from 'graphql';

import type { LinkPreviewView } from '../../../services/link-previews/index.js';
import type { MessageEditView, MessageView } from '../../../services/messages/index.js';
import { requireActor, type GraphqlContext } from '../../context.js';
import type { ParentOf } from '../../generated/resolver-types.js';
import { group, loader } from '../../loaders.js';

// The messages area's batched lookups for the fields of a page (graphql/loaders.ts).

export const loadMessage = (ctx: GraphqlContext, info: GraphQLResolveInfo, id: string) =>
  loader<MessageView>(ctx, info, 'message', async (ids) => {
    const rows = await ctx.services.messages.reading.messagesByIds(ids);
    return new Map(rows.map((r) => [r.id, r]));
  }).load(id);

export interface ReactionGroupView {
  emoji: string;
  count: number;
  reactedByMe: boolean;
}

export const loadReactions = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<ReactionGroupView[]>(ctx, info, 'reactions', async (ids) => {
    const rows = await ctx.services.messages.reading.reactionGroups(requireActor(ctx), ids);
    const out = new Map<string, ReactionGroupView[]>();
    for (const [id, list] of group(rows, 'messageId')) {
      out.set(
        id,
        list.map((r) => ({
          emoji: r.emoji,
          count: Number(r.count),
          reactedByMe: Number(r.mine) === 1,
        })),
      );
    }
    return out;
  }).load(messageId);

export const loadPinned = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<boolean>(ctx, info, 'pinned', async (ids) => {
    const pinned = await ctx.services.messages.reading.pinnedAmong(ids);
    return new Map(ids.map((id) => [id, pinned.has(id)]));
  }).load(messageId);

export const loadEdits = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<MessageEditView[]>(ctx, info, 'edits', async (ids) =>
    group(await ctx.services.messages.reading.editsOf(ids), 'messageId'),
  ).load(messageId);

export const loadLinkPreviews = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  messageId: string,
) =>
  loader<LinkPreviewView[]>(ctx, info, 'linkPreviews', (ids) =>
    ctx.services.linkPreviews.previewsFor(ids),
  ).load(messageId);

export const loadMlsInfo = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<ParentOf<'MlsMessageInfo'>>(ctx, info, 'mlsInfo', (ids) =>
    ctx.services.mls.messages.messageInfo(ids),
  ).load(messageId);
