import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const mlsCommits: Resolver<
  unknown,
  { conversationId: string; incarnation: number; fromEpoch: number; limit?: number | null }
> = (_p, { conversationId, ...args }, ctx) =>
  ctx.services.mls.groups.commits(requireActor(ctx), conversationId, args);
