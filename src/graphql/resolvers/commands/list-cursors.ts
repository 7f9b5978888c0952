import type { KeybindView, MacroView, PipelineView } from '../../../services/commands/index.js';
import { keyCursor } from '../../../services/paging/index.js';
import type { Resolver } from '../../resolver-types.js';

/** Each item's place in its list (creation time, then id), to pass as `after` or `before`. */
export const Macro = {
  cursor: ((m) => keyCursor(m.createdAt, m.id)) as Resolver<MacroView>,
};

export const Keybind = {
  cursor: ((k) => keyCursor(k.createdAt, k.id)) as Resolver<KeybindView>,
};

export const Pipeline = {
  cursor: ((p) => keyCursor(p.createdAt, p.id)) as Resolver<PipelineView>,
};
