import type { Resolvers } from '../../resolver-types.js';

import { cancelAccountDeletion } from './cancel-account-deletion.js';
import { requestAccountDeletion } from './request-account-deletion.js';

export const accountDeletionResolvers: Resolvers = {
  Mutation: { requestAccountDeletion, cancelAccountDeletion },
};
