import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const setMemberRole: MutationResolvers['setMemberRole'] = (_parent, { input }, ctx) =>
  ctx.services.workspaces.members.setMemberRole(
    requireActor(ctx),
    input.serverId,
    input.userId,
    input.role,
  );
