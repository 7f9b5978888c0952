import type { Resolvers } from '../../resolver-types.js';

import { DateTime } from './date-time.js';
import { serverInfo } from './server-info.js';

export const foundationResolvers: Resolvers = {
  DateTime,
  Query: { serverInfo },
  Mutation: { ping: () => true },
};
