import type { DeviceView } from '../../../services/devices/device-rules.js';
import type { Resolver } from '../../resolver-types.js';

export const Device = {
  // `current` is preset where the request's session changed device during the request.
  current: ((parent, _args, ctx) =>
    parent.current ?? (ctx.session !== null && ctx.session.deviceId === parent.id)) as Resolver<
    DeviceView & { current?: boolean }
  >,
};
