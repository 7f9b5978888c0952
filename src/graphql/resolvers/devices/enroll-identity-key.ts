import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const enrollIdentityKey: MutationResolvers['enrollIdentityKey'] = async (
  _parent,
  { input },
  ctx,
) => {
  const { account, device, identity } = await ctx.services.keyAuth.enroll(requireActor(ctx), input);
  return {
    user: { ...account, viewerIsSelf: true },
    device: { ...device, current: true },
    keyIdentity: identity,
  };
};
