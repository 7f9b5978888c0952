import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const addWorkspacePlugin: Resolver<
  unknown,
  {
    input: { serverId: string; bundleSha256: string; enabled?: boolean | null; settings?: unknown };
  }
> = (_parent, args, ctx) => ctx.services.plugins.add(requireActor(ctx), args.input);
