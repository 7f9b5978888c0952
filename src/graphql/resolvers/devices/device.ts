import type { GraphQLResolveInfo } from 'graphql';

import { KEY_PACKAGES_LOW } from '../../../services/mls/index.js';
import { optionalActor, type GraphqlContext } from '../../context.js';
import { loader } from '../../loaders.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

const loadCounts = (ctx: GraphqlContext, info: GraphQLResolveInfo, id: string) =>
  loader<number>(ctx, info, 'keyPackageCounts', (ids) =>
    ctx.services.mls.keyPackages.keyPackageCounts(ids),
  ).load(id);

export const Device: TypeResolvers<'Device'> = {
  keyPackagesAvailable: async (d, _a, ctx, info) => (await loadCounts(ctx, info, d.id)) ?? 0,
  keyPackagesLow: async (d, _a, ctx, info) =>
    ((await loadCounts(ctx, info, d.id)) ?? 0) < KEY_PACKAGES_LOW,
  // `current` is preset where the request's session changed device during the request.
  current: (parent, _args, ctx) =>
    parent.current ?? ctx.services.devices.isCurrent(optionalActor(ctx), parent.id),
};
