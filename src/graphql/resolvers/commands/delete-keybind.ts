import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const deleteKeybind: Resolver<unknown, { id: string }> = (_parent, args, ctx) =>
  ctx.services.commands.keybinds.delete(requireActor(ctx), args.id);
