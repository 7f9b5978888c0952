import type { BusEvent } from '../../events/bus.js';
import { userTopic } from '../../events/catalog.js';
import { LiveStream, type Verdict } from '../../events/live-stream.js';

/**
 * relayStream: the caller's own events (topic `user:<id>`) across every space: the direct space,
 * invitations, DM requests, typing and presence of their conversation partners, account events.
 * Everything on the topic is theirs; it ends only with the connection.
 */
export class RelayStream extends LiveStream {
  readonly topic: string;
  readonly policy = null;

  constructor(readonly accountId: string) {
    super();
    this.topic = userTopic(accountId);
  }

  decide(_event: BusEvent): Verdict {
    return 'deliver';
  }
}
