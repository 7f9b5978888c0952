import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** Each block's place in its list, to pass as `after` or `before`. */
export const PrincipalBlock: TypeResolvers<'PrincipalBlock'> = {
  cursor: (b) => keyCursor(b.createdAt, b.principalId),
};

export const IpBlock: TypeResolvers<'IpBlock'> = {
  cursor: (b) => keyCursor(b.createdAt, b.cidr),
};
