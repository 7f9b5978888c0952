import { keyCursor } from '../../../services/paging/index.js';
import type { SessionView } from '../../../services/sessions/index.js';
import type { Resolver } from '../../resolver-types.js';

/** A session's place in `mySessions`, to pass as `after` or `before`. */
export const Session = {
  cursor: ((s) => keyCursor(s.createdAt, s.id)) as Resolver<SessionView>,
};
