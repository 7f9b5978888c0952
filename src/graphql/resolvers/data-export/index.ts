import type { DataExportView } from '../../../services/data-export/index.js';
import { requireActor } from '../../context.js';
import type { MutationResolvers, QueryResolvers } from '../../generated/resolver-types.js';
import type { Resolvers } from '../../resolver-types.js';
import { enumName } from '../../resolver-types.js';

const view = (e: DataExportView) => ({
  ...e,
  state: enumName(e.state),
  downloadUrl: e.state === 'ready' ? `/api/data-exports/${e.id}/download` : null,
});

const myDataExports: QueryResolvers['myDataExports'] = async (_parent, _args, ctx) =>
  (await ctx.services.dataExports.list(requireActor(ctx))).map(view);

const requestDataExport: MutationResolvers['requestDataExport'] = async (_parent, _args, ctx) =>
  view(await ctx.services.dataExports.request(requireActor(ctx)));

export const dataExportResolvers: Resolvers = {
  Query: { myDataExports },
  Mutation: { requestDataExport },
};
