import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createMacro: Resolver<
  unknown,
  {
    input: {
      serverId?: string | null;
      name: string;
      description?: string | null;
      params?: string[] | null;
      steps: unknown[];
    };
  }
> = (_parent, args, ctx) => ctx.services.commands.macros.create(requireActor(ctx), args.input);
