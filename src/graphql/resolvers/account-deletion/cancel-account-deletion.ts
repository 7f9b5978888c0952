import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const cancelAccountDeletion: MutationResolvers['cancelAccountDeletion'] = (
  _parent,
  _args,
  ctx,
) => ctx.services.accountDeletion.cancel(requireActor(ctx));
