import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const joinWorkspace: Resolver<unknown, { token: string }> = (_parent, { token }, ctx) =>
  ctx.services.invites.join(requireActor(ctx), token);
