import type { QueryResolvers } from '../../generated/resolver-types.js';

export const registrationChallenge: QueryResolvers['registrationChallenge'] = (
  _parent,
  _args,
  ctx,
) => ctx.services.signup.challenge();
