import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';
import type { PresenceChoice } from '../../../services/presence/index.js';

export const presence: Resolver<unknown, { userIds: string[] }> = (_parent, { userIds }, ctx) =>
  ctx.services.presence.presenceOf(requireActor(ctx), userIds);

export const myPresence: Resolver = (_parent, _args, ctx) =>
  ctx.services.presence.mine(requireActor(ctx));

export const setPresence: Resolver<unknown, { choice: PresenceChoice }> = async (
  _parent,
  { choice },
  ctx,
) => {
  const actor = requireActor(ctx);
  await ctx.services.presence.setChoice(actor, choice);
  return ctx.services.presence.mine(actor);
};
