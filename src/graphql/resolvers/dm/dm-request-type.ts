import type { DmRequestTable } from '../../../db/tables/collaboration.js';
import { optionalActor } from '../../context.js';
import { keyCursor } from '../../../services/paging/index.js';
import type { Resolver } from '../../resolver-types.js';
import { loadUser } from '../accounts/loaders.js';

import { loadPreview } from './loaders.js';

/** DmRequest fields; the parent is a dm_request row. What the caller sees is the service's rule. */
export const DmRequest = {
  cursor: ((r) => keyCursor(r.createdAt, r.id)) as Resolver<DmRequestTable>,
  from: ((r, _a, ctx, info) => loadUser(ctx, info, r.fromId)) as Resolver<DmRequestTable>,
  to: ((r, _a, ctx, info) => loadUser(ctx, info, r.toId)) as Resolver<DmRequestTable>,
  state: ((r, _a, ctx) =>
    ctx.services.dm
      .requestAsSeenBy(optionalActor(ctx), r)
      .state.toUpperCase()) as Resolver<DmRequestTable>,
  respondedAt: ((r, _a, ctx) =>
    ctx.services.dm.requestAsSeenBy(optionalActor(ctx), r).respondedAt) as Resolver<DmRequestTable>,
  preview: (async (r, _a, ctx, info) =>
    ctx.services.dm.maySeePreview(optionalActor(ctx), r)
      ? ((await loadPreview(ctx, info, r.conversationId)) ?? [])
      : []) as Resolver<DmRequestTable>,
};
