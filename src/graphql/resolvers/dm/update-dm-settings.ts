import type { DmPartners, DmReach } from '../../../config/index.js';
import { requireActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

import { settingsView } from './my-dm-settings.js';

type Input = { inbound?: string | null; outbound?: string | null; partners?: string | null };

const lower = <T extends string>(v: string | null | undefined) =>
  v ? (v.toLowerCase() as T) : null;

export const updateDmSettings: Resolver<unknown, { input: Input }> = async (
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
