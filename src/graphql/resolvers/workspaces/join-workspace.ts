import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const joinWorkspace: MutationResolvers['joinWorkspace'] = (_parent, { token }, ctx) =>
  ctx.services.invites.join(requireActor(ctx), token);
