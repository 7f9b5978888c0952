import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const reportMessage: Resolver<
  unknown,
  {
    messageId: string;
    category: string;
    text?: string | null;
    reveal?: { plaintext: string; opening: string } | null;
  }
> = (_parent, args, ctx) => ctx.services.moderation.reports.reportMessage(requireActor(ctx), args);
