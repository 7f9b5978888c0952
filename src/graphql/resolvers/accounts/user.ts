import { avatarUrlOf } from '../../../services/accounts/index.js';
import { optionalActor } from '../../context.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';
import type { UserParent } from '../../mappers.js';
import type { Resolver } from '../../resolver-types.js';

export type { UserParent } from '../../mappers.js';

/** Fields of User that depend on who is asking; the accounts service decides who that is. */
const isSelf = (parent: UserParent, ctx: Parameters<Resolver>[2]) =>
  parent.viewerIsSelf === true ||
  ctx.services.accounts.seesPrivateFields(optionalActor(ctx), parent.id);

export const User: TypeResolvers<'User'> = {
  email: (parent, _args, ctx) => (isSelf(parent, ctx) ? parent.email : null),
  deletionScheduledFor: (parent, _args, ctx) =>
    isSelf(parent, ctx) ? parent.deletionScheduledFor : null,
  probationEndsAt: (parent, _args, ctx) =>
    isSelf(parent, ctx) ? ctx.services.accounts.probationEndsAt(parent.createdAt) : null,
  instanceOperator: (parent, _args, ctx) => isSelf(parent, ctx) && parent.isOperator,
  avatarUrl: (parent) => avatarUrlOf(parent.avatarPath ?? null),
  cursor: (parent) => parent.listCursor ?? null,
};
