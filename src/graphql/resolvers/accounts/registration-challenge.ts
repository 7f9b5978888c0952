import type { Resolver } from '../../resolver-types.js';

export const registrationChallenge: Resolver = (_parent, _args, ctx) =>
  ctx.services.signup.challenge();
