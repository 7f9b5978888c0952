import type { DataExportView } from '../../../services/data-export/index.js';
import { requireActor } from '../../context.js';
import type { Resolver, Resolvers } from '../../resolver-types.js';

const view = (e: DataExportView) => ({
  ...e,
  state: e.state.toUpperCase(),
  downloadUrl: e.state === 'ready' ? `/api/data-exports/${e.id}/download` : null,
});

const myDataExports: Resolver<unknown, Record<string, never>> = async (_parent, _args, ctx) =>
  (await ctx.services.dataExports.list(requireActor(ctx))).map(view);

const requestDataExport: Resolver<unknown, Record<string, never>> = async (_parent, _args, ctx) =>
  view(await ctx.services.dataExports.request(requireActor(ctx)));

export const dataExportResolvers: Resolvers = {
  Query: { myDataExports },
  Mutation: { requestDataExport },
};
