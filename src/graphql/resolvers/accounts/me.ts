import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const me: Resolver = (_parent, _args, ctx) =>
  ctx.app.services.accounts.me(requireActor(ctx));
