import { requireSession } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

export const logoutOtherSessions: MutationResolvers['logoutOtherSessions'] = (
  _parent,
  _args,
  ctx,
) => ctx.services.sessions.endOthers(requireSession(ctx));
