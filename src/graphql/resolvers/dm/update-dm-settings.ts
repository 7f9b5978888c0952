import type { DmPartners, DmReach } from '../../../config/index.js';
import { requireActor } from '../../context.js';
import type { MutationResolvers } from '../../generated/resolver-types.js';

import { settingsView } from './my-dm-settings.js';

const lower = <T extends string>(v: string | null | undefined) =>
  v ? (v.toLowerCase() as T) : null;

export const updateDmSettings: MutationResolvers['updateDmSettings'] = async (
  _parent,
  { input },
  ctx,
) =>
  settingsView(
    await ctx.services.dm.updateSettings(requireActor(ctx), {
      inbound: lower<DmReach>(input.inbound),
      outbound: lower<DmReach>(input.outbound),
      partners: lower<DmPartners>(input.partners),
    }),
  );
