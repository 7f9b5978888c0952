import type { Resolver } from '../../resolver-types.js';

export const keyLoginChallenge: Resolver = (_parent, _args, ctx) =>
  ctx.services.keyAuth.challenges.issue();
