import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

/** Each item's place in its list (creation time, then id), to pass as `after` or `before`. */
export const Macro: TypeResolvers<'Macro'> = {
  cursor: (m) => keyCursor(m.createdAt, m.id),
};

export const Keybind: TypeResolvers<'Keybind'> = {
  cursor: (k) => keyCursor(k.createdAt, k.id),
};

export const Pipeline: TypeResolvers<'Pipeline'> = {
  cursor: (p) => keyCursor(p.createdAt, p.id),
};
