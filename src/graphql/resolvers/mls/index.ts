import type { Resolvers } from '../../resolver-types.js';

import { claimKeyPackages } from './claim-key-packages.js';
import { commitMlsGroup } from './commit-mls-group.js';
import { mlsCommits } from './mls-commits.js';
import { mlsGroupState } from './mls-group-state.js';
import { mlsWelcomes } from './mls-welcomes.js';
import { sendEncryptedMessage } from './send-encrypted-message.js';

export const mlsResolvers: Resolvers = {
  Query: { mlsGroupState, mlsCommits, mlsWelcomes },
  Mutation: { claimKeyPackages, commitMlsGroup, sendEncryptedMessage },
};
