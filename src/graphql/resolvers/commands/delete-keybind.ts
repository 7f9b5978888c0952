import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const deleteKeybind: MutationResolvers['deleteKeybind'] = (_parent, args, ctx) =>
  ctx.services.commands.keybinds.delete(requireActor(ctx), args.id);
