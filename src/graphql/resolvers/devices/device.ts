import type { DeviceView } from '../../../services/devices/device-rules.js';
import { optionalActor } from '../../context.js';
import type { Resolver } from '../../resolver-types.js';

export const Device = {
  // `current` is preset where the request's session changed device during the request.
  current: ((parent, _args, ctx) =>
    parent.current ??
    ctx.app.services.devices.isCurrent(optionalActor(ctx), parent.id)) as Resolver<
    DeviceView & { current?: boolean }
  >,
};
