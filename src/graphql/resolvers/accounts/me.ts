import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const me: QueryResolvers['me'] = (_parent, _args, ctx) => {
  const actor = requireActor(ctx);
  // The account read with the session at the start of this request, when nothing ran since.
  if (ctx.sessionAccount) return ctx.sessionAccount;
  return ctx.services.accounts.me(actor);
};
