import { requireActor } from '../../context.js';
import type { MutationResolvers, QueryResolvers } from '../../generated/resolver-types.js';

export const presence: QueryResolvers['presence'] = (_parent, { userIds }, ctx) =>
  ctx.services.presence.presenceOf(requireActor(ctx), userIds);

export const myPresence: QueryResolvers['myPresence'] = (_parent, _args, ctx) =>
  ctx.services.presence.mine(requireActor(ctx));

export const setPresence: MutationResolvers['setPresence'] = async (_parent, { choice }, ctx) => {
  const actor = requireActor(ctx);
  await ctx.services.presence.setChoice(actor, choice);
  return ctx.services.presence.mine(actor);
};
