import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const revokeWorkspaceInvite: Resolver<unknown, { inviteId: string }> = (
  _parent,
  { inviteId },
  ctx,
) => ctx.services.invites.revoke(requireActor(ctx), inviteId);
