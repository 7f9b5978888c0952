import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const createCustomEmoji: Resolver<
  unknown,
  { input: { serverId: string; name: string; contentType: string; image: string } }
> = (_parent, { input }, ctx) => ctx.services.emoji.create(requireActor(ctx), input);
