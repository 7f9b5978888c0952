import type { CreateInviteInput } from '../../../services/workspaces/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createWorkspaceInvite: Resolver<unknown, { input: CreateInviteInput }> = (
  _parent,
  { input },
  ctx,
) => ctx.services.invites.create(requireActor(ctx), input);
