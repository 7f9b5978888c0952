import type { AccountView } from '../../../services/accounts/account-service.js';
import type { Resolver } from '../../resolver-types.js';

/** Fields of User that depend on who is asking. */
const isSelf = (parent: AccountView, ctx: Parameters<Resolver>[2]) =>
  ctx.session?.accountId === parent.id;

export const User = {
  email: ((parent, _args, ctx) =>
    isSelf(parent, ctx) ? parent.email : null) as Resolver<AccountView>,
  deletionScheduledFor: ((parent, _args, ctx) =>
    isSelf(parent, ctx) ? parent.deletionScheduledFor : null) as Resolver<AccountView>,
  probationEndsAt: ((parent, _args, ctx) =>
    isSelf(parent, ctx)
      ? ctx.app.services.accounts.probationEndsAt(parent.createdAt)
      : null) as Resolver<AccountView>,
  instanceOperator: ((parent, _args, ctx) =>
    isSelf(parent, ctx) && parent.isOperator) as Resolver<AccountView>,
};
