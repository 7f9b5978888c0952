import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const requestAccountDeletion: MutationResolvers['requestAccountDeletion'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.accountDeletion.request(requireActor(ctx), input.confirmUsername);
