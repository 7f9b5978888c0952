import type { Resolvers } from '../../resolver-types.js';

import { applyRemoteRevocation } from './apply-remote-revocation.js';
import { myRemoteHosts } from './my-remote-hosts.js';

export const federationResolvers: Resolvers = {
  Query: { myRemoteHosts },
  Mutation: { applyRemoteRevocation },
};
