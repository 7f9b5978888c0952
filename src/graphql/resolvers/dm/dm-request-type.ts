import type { DmRequestTable } from '../../../db/tables/collaboration.js';
import type { Resolver } from '../../resolver-types.js';
import { loadPreview, loadUser } from '../messages/loaders.js';

/** DmRequest fields; the parent is a dm_request row. */
export const DmRequest = {
  from: ((r, _a, ctx, info) => loadUser(ctx, info, r.fromId)) as Resolver<DmRequestTable>,
  to: ((r, _a, ctx, info) => loadUser(ctx, info, r.toId)) as Resolver<DmRequestTable>,
  // The sender is never told of a decline (docs/direct-messages.md).
  state: ((r, _a, ctx) =>
    r.state === 'declined' && ctx.session?.accountId === r.fromId
      ? 'PENDING'
      : r.state.toUpperCase()) as Resolver<DmRequestTable>,
  respondedAt: ((r, _a, ctx) =>
    r.state === 'declined' && ctx.session?.accountId === r.fromId
      ? null
      : r.respondedAt) as Resolver<DmRequestTable>,
  preview: (async (r, _a, ctx, info) => {
    const me = ctx.session?.accountId;
    if (me !== r.fromId && me !== r.toId) return [];
    return (await loadPreview(ctx, info, r.conversationId)) ?? [];
  }) as Resolver<DmRequestTable>,
};
