import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const commitMlsGroup: MutationResolvers['commitMlsGroup'] = (_p, args, ctx) =>
  ctx.services.mls.groups.commit(requireActor(ctx), args.input);
