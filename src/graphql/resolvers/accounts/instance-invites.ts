import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';

export const instanceInvites: QueryResolvers['instanceInvites'] = (_parent, args, ctx) =>
  ctx.services.registration.listInstanceInvites(requireActor(ctx), args);
