import type { Role } from '../../../auth/policy.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const setMemberRole: Resolver<
  unknown,
  { input: { serverId: string; userId: string; role: Role } }
> = (_parent, { input }, ctx) =>
  ctx.services.workspaces.members.setMemberRole(
    requireActor(ctx),
    input.serverId,
    input.userId,
    input.role,
  );
