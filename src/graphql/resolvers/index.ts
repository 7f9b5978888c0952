import { mergeResolvers, type Resolvers } from '../resolver-types.js';

import { accountResolvers } from './accounts/index.js';
import { foundationResolvers } from './foundation/index.js';

/** Every area's resolvers. An area adds one line here. */
export function allResolvers(): Resolvers {
  return mergeResolvers(foundationResolvers, accountResolvers);
}
