import type { Resolvers } from '../../resolver-types.js';

import { login } from './login.js';
import { logout } from './logout.js';
import { me } from './me.js';
import { User } from './user.js';

export const accountResolvers: Resolvers = {
  Query: { me },
  Mutation: { login, logout },
  User,
};
