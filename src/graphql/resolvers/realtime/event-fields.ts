import type { BusEvent } from '../../../events/bus.js';
import type { Resolver } from '../../resolver-types.js';

// WorkspaceEvent and RelayEvent read straight from the bus event. They must not depend on the
// subscriber: one execution serves every subscriber of the same document (docs/realtime.md).

type Fields = Record<string, unknown>;

/** Routing fields stay out of `payload`: the envelope carries them or they are internal. */
const ENVELOPE_KEYS = new Set(['audience', 'serverId', 'conversationId', 'hostServerId']);

const type: Resolver<BusEvent> = (event) => event.type;
const serverId: Resolver<BusEvent> = (event) => (event.payload as Fields).serverId ?? null;
const conversationId: Resolver<BusEvent> = (event) =>
  (event.payload as Fields).conversationId ?? null;
const at: Resolver<BusEvent> = (event) => event.at;
const hostServerId: Resolver<BusEvent> = (event) => (event.payload as Fields).hostServerId ?? null;
const payload: Resolver<BusEvent> = (event) => {
  const out: Fields = {};
  for (const [key, value] of Object.entries(event.payload as Fields)) {
    if (!ENVELOPE_KEYS.has(key)) out[key] = value;
  }
  return out;
};

export const eventFields = { type, serverId, conversationId, at, payload };
/** RelayEvent adds the host of a space on another server (federation). */
export const relayEventFields = { ...eventFields, hostServerId };
