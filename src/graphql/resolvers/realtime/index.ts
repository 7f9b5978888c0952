import type { Resolvers } from '../../resolver-types.js';

import { eventFields, relayEventFields } from './event-fields.js';
import { JSONScalar } from './json-scalar.js';
import { myPresence, presence, setPresence } from './presence.js';
import { relayStream } from './relay-stream.js';
import { startTyping } from './start-typing.js';
import { workspaceEvents } from './workspace-events.js';

export const realtimeResolvers: Resolvers = {
  JSON: JSONScalar,
  Subscription: { workspaceEvents, relayStream },
  WorkspaceEvent: eventFields,
  RelayEvent: relayEventFields,
  PresenceStatus: { ONLINE: 'online', AWAY: 'away', OFFLINE: 'offline' },
  PresenceChoice: { AUTO: 'auto', AWAY: 'away', INVISIBLE: 'invisible' },
  Query: { presence, myPresence },
  Mutation: { setPresence, startTyping },
};
