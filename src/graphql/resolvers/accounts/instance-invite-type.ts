import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** An invite's place in `instanceInvites`, to pass as `after` or `before`. */
export const InstanceInvite: TypeResolvers<'InstanceInvite'> = {
  cursor: (i) => keyCursor(i.createdAt, i.id),
};
