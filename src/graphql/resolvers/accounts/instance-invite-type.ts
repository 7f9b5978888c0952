import type { InstanceInviteView } from '../../../services/registration/index.js';
import { keyCursor } from '../../../services/paging/index.js';
import type { Resolver } from '../../resolver-types.js';

/** An invite's place in `instanceInvites`, to pass as `after` or `before`. */
export const InstanceInvite = {
  cursor: ((i) => keyCursor(i.createdAt, i.id)) as Resolver<InstanceInviteView>,
};
