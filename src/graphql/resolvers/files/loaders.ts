import type { GraphQLResolveInfo } from 'graphql';

import type { AttachmentPayload } from '../../../events/catalog.js';
import { requireActor, type GraphqlContext } from '../../context.js';
import { group, loader } from '../../loaders.js';

/** The attachments of the messages of a page, in one query (no N+1). */
export const loadAttachments = (ctx: GraphqlContext, info: GraphQLResolveInfo, messageId: string) =>
  loader<AttachmentPayload[]>(ctx, info, 'attachments', async (ids) =>
    group(await ctx.services.attachments.ofMessages(requireActor(ctx), ids), 'messageId'),
  ).load(messageId);
