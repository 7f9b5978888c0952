import { requireSession } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';
import type { PresenceChoice } from '../../../services/presence/presence-service.js';

export const presence: Resolver<unknown, { userIds: string[] }> = (_parent, { userIds }, ctx) =>
  ctx.app.services.presence.presenceOf(requireSession(ctx).accountId, userIds);

export const myPresence: Resolver = async (_parent, _args, ctx) => {
  const { accountId } = requireSession(ctx);
  const service = ctx.app.services.presence;
  const [choice, [shown]] = await Promise.all([
    service.choiceOf(accountId),
    service.presenceOf(accountId, [accountId]),
  ]);
  return { choice, status: shown?.status ?? 'offline' };
};

export const setPresence: Resolver<unknown, { choice: PresenceChoice }> = async (
  parent,
  { choice },
  ctx,
  info,
) => {
  await ctx.app.services.presence.setChoice(requireSession(ctx).accountId, choice);
  return myPresence(parent, {}, ctx, info);
};
