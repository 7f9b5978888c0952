import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createPipeline: Resolver<
  unknown,
  {
    input: {
      serverId: string;
      name: string;
      trigger: unknown;
      channelId?: string | null;
      steps: unknown[];
    };
  }
> = (_parent, args, ctx) => ctx.services.commands.pipelines.create(requireActor(ctx), args.input);
