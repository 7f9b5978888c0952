import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** A session's place in `mySessions`, to pass as `after` or `before`. */
export const Session: TypeResolvers<'Session'> = {
  cursor: (s) => keyCursor(s.createdAt, s.id),
};
