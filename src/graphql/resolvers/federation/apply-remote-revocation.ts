import type { MutationResolvers } from '../../generated/resolver-types.js';

/** Needs no session: the relay's signature over the statement is the authority. */
export const applyRemoteRevocation: MutationResolvers['applyRemoteRevocation'] = async (
  _parent,
  args,
  ctx,
) => {
  const r = await ctx.federation.revocations.applyRevocationStatement(args);
  return { revokedDevices: r.revoked, sessionsEnded: r.sessionsEnded };
};
