import type { CreateInviteInput } from '../../../services/workspaces/invite-service.js';
import { validation } from '../../../errors.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createWorkspaceInvite: Resolver<
  unknown,
  { input: Omit<CreateInviteInput, 'role'> & { role?: string | null } }
> = (_parent, { input }, ctx) => {
  const actor = requireActor(ctx);
  const role = input.role ?? 'member';
  if (role !== 'member' && role !== 'guest') {
    throw validation('an invite gives the MEMBER or GUEST role');
  }
  return ctx.app.services.invites.create(actor, { ...input, role });
};
