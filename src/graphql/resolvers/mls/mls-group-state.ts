import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const mlsGroupState: Resolver<unknown, { conversationId: string }> = (_p, args, ctx) =>
  ctx.services.mls.groups.groupState(requireActor(ctx), args.conversationId);
