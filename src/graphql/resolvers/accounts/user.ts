import { avatarUrlOf, type AccountView } from '../../../services/accounts/index.js';
import { optionalActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

/**
 * A User as resolvers hand it over. `viewerIsSelf` marks the user of a SessionPayload: the
 * caller who just signed in, before the request carries their session. `listCursor` is the
 * user's place in a list whose items carry their cursor (`blockedUsers`,
 * `Conversation.members`).
 */
export type UserParent = AccountView & { viewerIsSelf?: boolean; listCursor?: string };

/** Fields of User that depend on who is asking; the accounts service decides who that is. */
const isSelf = (parent: UserParent, ctx: Parameters<Resolver>[2]) =>
  parent.viewerIsSelf === true ||
  ctx.services.accounts.seesPrivateFields(optionalActor(ctx), parent.id);

export const User = {
  email: ((parent, _args, ctx) =>
    isSelf(parent, ctx) ? parent.email : null) as Resolver<UserParent>,
  deletionScheduledFor: ((parent, _args, ctx) =>
    isSelf(parent, ctx) ? parent.deletionScheduledFor : null) as Resolver<UserParent>,
  probationEndsAt: ((parent, _args, ctx) =>
    isSelf(parent, ctx)
      ? ctx.services.accounts.probationEndsAt(parent.createdAt)
      : null) as Resolver<UserParent>,
  instanceOperator: ((parent, _args, ctx) =>
    isSelf(parent, ctx) && parent.isOperator) as Resolver<UserParent>,
  avatarUrl: ((parent) => avatarUrlOf(parent.avatarPath ?? null)) as Resolver<UserParent>,
  cursor: ((parent) => parent.listCursor ?? null) as Resolver<UserParent>,
};
