import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const revokeWorkspaceInvite: MutationResolvers['revokeWorkspaceInvite'] = (
  _parent,
  { inviteId },
  ctx,
) => ctx.services.invites.revoke(requireActor(ctx), inviteId);
