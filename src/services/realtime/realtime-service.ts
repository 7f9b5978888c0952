import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import { LiveSource } from '../../events/live-stream.js';
import type { Clock } from '../../lib/clock.js';
import type { PresenceService } from '../presence/index.js';

import { RelayStream } from './relay-stream.js';
import { WorkspaceStream } from './workspace-stream.js';

/**
 * The subscriptions' streams: who may see which events is decided here, once at subscribe, by
 * the workspace and conversation membership (their owners' query functions). The WebSocket
 * layer only fans the streams' events out.
 */
export class RealtimeService {
  constructor(
    private readonly db: Db,
    private readonly presence: PresenceService,
    private readonly clock: Clock,
  ) {}

  /** workspaceEvents(serverId): NOT_FOUND for a non-member; subscribing counts as activity. */
  async workspaceStream(
    actor: Actor,
    serverId: string,
    opts: { joinedChannelsOnly: boolean } = { joinedChannelsOnly: false },
  ): Promise<LiveSource> {
    const accountId = actingAccountId(actor);
    const stream = await WorkspaceStream.open(this.db, accountId, serverId, {
      ...opts,
      now: () => this.clock.now().getTime(),
    });
    this.presence.touch(accountId);
    return new LiveSource([stream]);
  }

  /** relayStream: the account's own topic; subscribing counts as activity. */
  relayStream(actor: Actor): LiveSource {
    const accountId = actingAccountId(actor);
    this.presence.touch(accountId);
    return new LiveSource([new RelayStream(accountId)]);
  }
}
