import type { BusEvent } from '../../../events/bus.js';
import type { TypeResolvers } from '../../generated/resolver-types.js';

// WorkspaceEvent and RelayEvent read straight from the bus event. They must not depend on the
// subscriber: one execution serves every subscriber of the same document (docs/realtime.md).

type Fields = Record<string, unknown>;
type F = Required<TypeResolvers<'RelayEvent'>>;

/** Routing fields stay out of `payload`: the envelope carries them or they are internal. */
const ENVELOPE_KEYS = new Set(['audience', 'serverId', 'conversationId', 'hostServerId']);

const routing = (event: BusEvent, key: string) =>
  ((event.payload as Fields)[key] ?? null) as string | null;

const type: F['type'] = (event) => event.type;
const serverId: F['serverId'] = (event) => routing(event, 'serverId');
const conversationId: F['conversationId'] = (event) => routing(event, 'conversationId');
const at: F['at'] = (event) => event.at;
const hostServerId: F['hostServerId'] = (event) => routing(event, 'hostServerId');
const payload: F['payload'] = (event) => {
  const out: Fields = {};
  for (const [key, value] of Object.entries(event.payload as Fields)) {
    if (!ENVELOPE_KEYS.has(key)) out[key] = value;
  }
  return out;
};

/** A workspace's events always name it. */
export const eventFields: TypeResolvers<'WorkspaceEvent'> = {
  type,
  serverId: (event) => routing(event, 'serverId') as string,
  conversationId,
  at,
  payload,
};
/** RelayEvent adds the host of a space on another server (federation). */
export const relayEventFields: TypeResolvers<'RelayEvent'> = {
  ...eventFields,
  serverId,
  hostServerId,
};
