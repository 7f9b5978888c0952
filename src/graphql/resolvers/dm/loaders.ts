import type { GraphQLResolveInfo } from 'graphql';

import type { MessageView } from '../../../services/messages/index.js';
import type { GraphqlContext } from '../../context.js';
import { loader } from '../../loaders.js';

/** The newest messages of a DM request's conversation, batched per page. */
export const loadPreview = (
  ctx: GraphqlContext,
  info: GraphQLResolveInfo,
  conversationId: string,
) =>
  loader<MessageView[]>(ctx, info, 'preview', (ids) => ctx.services.dm.previews(ids)).load(
    conversationId,
  );
