import type { DmSettingsView } from '../../../services/dm/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

/** The settings with the enum values the SDL uses (DmReach, DmPartners). */
export const settingsView = (s: DmSettingsView) => ({
  inbound: s.inbound.toUpperCase(),
  outbound: s.outbound.toUpperCase(),
  partners: s.partners.toUpperCase(),
  outsideFloorFrom: s.outsideFloorFrom,
});

export const myDmSettings: Resolver = async (_parent, _args, ctx) =>
  settingsView(await ctx.services.dm.settings(requireActor(ctx)));
