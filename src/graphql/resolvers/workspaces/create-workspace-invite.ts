import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const createWorkspaceInvite: MutationResolvers['createWorkspaceInvite'] = (
  _parent,
  { input },
  ctx,
) => ctx.services.invites.create(requireActor(ctx), input);
