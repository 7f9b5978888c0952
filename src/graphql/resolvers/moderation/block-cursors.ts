import type { IpBlockView } from '../../../services/ip-blocks/index.js';
import type { PrincipalBlockView } from '../../../services/moderation/index.js';
import { keyCursor } from '../../../services/paging/index.js';
import type { Resolver } from '../../resolver-types.js';

/** Each block's place in its list, to pass as `after` or `before`. */
export const PrincipalBlock = {
  cursor: ((b) => keyCursor(b.createdAt, b.principalId)) as Resolver<PrincipalBlockView>,
};

export const IpBlock = {
  cursor: ((b) => keyCursor(b.createdAt, b.cidr)) as Resolver<IpBlockView>,
};
