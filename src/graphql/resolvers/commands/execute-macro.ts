import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const executeMacro: Resolver<
  unknown,
  {
    input: {
      macroId: string;
      args?: unknown;
      context?: { serverId?: string; conversationId?: string } | null;
      initiator?: string | null;
      confirmationToken?: string | null;
    };
  }
> = (_parent, args, ctx) => ctx.services.commands.macros.execute(requireActor(ctx), args.input);
