import type { MutationResolvers } from '../../generated/resolver-types.js';

export const keyLoginChallenge: MutationResolvers['keyLoginChallenge'] = (_parent, _args, ctx) =>
  ctx.services.keyAuth.challenges.issue();
