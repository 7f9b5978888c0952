import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const requestAccountDeletion: Resolver<unknown, { input: { confirmUsername: string } }> = (
  _parent,
  { input },
  ctx,
) => ctx.services.accountDeletion.request(requireActor(ctx), input.confirmUsername);
