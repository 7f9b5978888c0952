import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const updateWorkspacePlugin: Resolver<
  unknown,
  {
    input: {
      id: string;
      enabled?: boolean | null;
      bundleSha256?: string | null;
      settings?: unknown;
    };
  }
> = (_parent, args, ctx) => ctx.services.plugins.update(requireActor(ctx), args.input);
