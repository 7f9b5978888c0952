import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const executeCommand: MutationResolvers['executeCommand'] = (_parent, args, ctx) =>
  ctx.services.commands.run.execute(requireActor(ctx), args.input);
