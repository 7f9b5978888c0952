import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const mlsCommits: QueryResolvers['mlsCommits'] = (_p, { conversationId, ...args }, ctx) =>
  ctx.services.mls.groups.commits(requireActor(ctx), conversationId, args);
