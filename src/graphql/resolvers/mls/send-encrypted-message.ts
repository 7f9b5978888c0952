import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const sendEncryptedMessage: MutationResolvers['sendEncryptedMessage'] = (_p, args, ctx) =>
  ctx.services.mls.messages.sendEncrypted(requireActor(ctx), args.input);
