import type { DmSettingsView } from '../../../services/dm/index.js';
import { requireActor } from '../../context.js';
import type { QueryResolvers } from '../../generated/resolver-types.js';
import { enumName } from '../../resolver-types.js';

/** The settings with the enum values the SDL uses (DmReach, DmPartners). */
export const settingsView = (s: DmSettingsView) => ({
  inbound: enumName(s.inbound),
  outbound: enumName(s.outbound),
  partners: enumName(s.partners),
  outsideFloorFrom: s.outsideFloorFrom,
});

export const myDmSettings: QueryResolvers['myDmSettings'] = async (_parent, _args, ctx) =>
  settingsView(await ctx.services.dm.settings(requireActor(ctx)));
