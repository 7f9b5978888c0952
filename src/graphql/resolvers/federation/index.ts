import type { Resolvers } from '../../resolver-types.js';

import { applyRemoteRevocation } from './apply-remote-revocation.js';

export const federationResolvers: Resolvers = {
  Mutation: { applyRemoteRevocation },
};
