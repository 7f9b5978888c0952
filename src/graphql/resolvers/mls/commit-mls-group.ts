import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const commitMlsGroup: Resolver<
  unknown,
  {
    input: {
      conversationId: string;
      incarnation: number;
      epoch: number;
      commit: string;
      welcome?: string | null;
      addedDeviceIds?: string[] | null;
      removedDeviceIds?: string[] | null;
    };
  }
> = (_p, args, ctx) => ctx.services.mls.groups.commit(requireActor(ctx), args.input);
