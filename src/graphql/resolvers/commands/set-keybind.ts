import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const setKeybind: Resolver<
  unknown,
  {
    input: {
      serverId?: string | null;
      chord: string;
      command?: string | null;
      macroId?: string | null;
      args?: unknown;
    };
  }
> = (_parent, args, ctx) => ctx.services.commands.keybinds.set(requireActor(ctx), args.input);
