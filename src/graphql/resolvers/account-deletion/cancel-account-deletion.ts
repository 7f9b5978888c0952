import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const cancelAccountDeletion: Resolver = (_parent, _args, ctx) =>
  ctx.services.accountDeletion.cancel(requireActor(ctx));
