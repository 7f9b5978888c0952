import type { Resolvers } from '../../resolver-types.js';

import { searchChannels } from './search-channels.js';
import { searchLanguage, setSearchLanguage } from './search-language.js';
import { searchMembers } from './search-members.js';
import { searchMessages } from './search-messages.js';
import { searchWorkspaces } from './search-workspaces.js';

export const searchResolvers: Resolvers = {
  Query: { searchMessages, searchMembers, searchChannels, searchWorkspaces, searchLanguage },
  Mutation: { setSearchLanguage },
};
