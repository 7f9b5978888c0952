import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const setKeybind: MutationResolvers['setKeybind'] = (_parent, args, ctx) =>
  ctx.services.commands.keybinds.set(requireActor(ctx), args.input);
