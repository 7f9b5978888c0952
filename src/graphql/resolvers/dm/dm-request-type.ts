import { optionalActor } from '../../context.js';
import { keyCursor } from '../../../services/paging/index.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';
import { loadUser } from '../accounts/loaders.js';

import { loadPreview } from './loaders.js';
import { enumName } from '../../resolver-types.js';

/** DmRequest fields; the parent is a dm_request row. What the caller sees is the service's rule. */
export const DmRequest: TypeResolvers<'DmRequest'> = {
  cursor: (r) => keyCursor(r.createdAt, r.id),
  from: (r, _a, ctx, info) => loadUser(ctx, info, r.fromId),
  to: (r, _a, ctx, info) => loadUser(ctx, info, r.toId),
  state: (r, _a, ctx) => enumName(ctx.services.dm.requestAsSeenBy(optionalActor(ctx), r).state),
  respondedAt: (r, _a, ctx) => ctx.services.dm.requestAsSeenBy(optionalActor(ctx), r).respondedAt,
  preview: async (r, _a, ctx, info) =>
    ctx.services.dm.maySeePreview(optionalActor(ctx), r)
      ? ((await loadPreview(ctx, info, r.conversationId)) ?? [])
      : [],
};
