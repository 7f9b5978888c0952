import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { EventBus } from '../../events/bus.js';
import { userTopic } from '../../events/catalog.js';
import { forbidden, notFound, validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import { Lru } from '../../lib/lru.js';

import type { PresenceService } from './presence-service.js';
import type { Authz } from '../authz/index.js';
import { prefetchedAccessOf, findConversationAccess, membersOf } from '../conversations/index.js';

import { eitherBlocks, findAccountNames } from './queries.js';

/** One TypingStarted per user and conversation at most this often; clients repeat while typing. */
export const TYPING_THROTTLE_MS = 3_000;

/**
 * Typing indicators for direct conversations. Nothing is stored: each call publishes one
 * `TypingStarted` on the other member's own topic, which reaches them through `relayStream`.
 * A client shows the indicator for a few seconds after each event (docs/realtime.md).
 */
export class TypingService {
  /** Last event time per `user:conversation`, kept in memory per process like other limits. */
  private readonly lastSent = new Lru<string, number>(50_000);

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly presence: PresenceService,
    private readonly authz: Authz,
  ) {}

  /** Announces that the caller is typing; false when throttled or held back by a block. */
  async startTyping(actor: Actor, conversationId: string): Promise<boolean> {
    const accountId = actingAccountId(actor);
    if (!isId(conversationId)) throw notFound('conversation');
    // The caller's own access first (one row, read with other requests' on PostgreSQL): a
    // refusal in a channel of thousands reads nobody else.
    const access = await findConversationAccess(
      this.db.kysely,
      conversationId,
      accountId,
      prefetchedAccessOf(this.authz, actor),
    );
    if (!access || access.memberState === null) throw notFound('conversation');
    if (access.memberState !== 'member')
      throw forbidden('accept the invitation to this conversation first');
    if (access.kind !== 'direct') {
      throw validation('typing is shown in direct conversations only');
    }
    this.presence.touch(accountId);
    const now = this.clock.now().getTime();
    const key = `${accountId}:${conversationId}`;
    const last = this.lastSent.get(key);
    if (last !== undefined && now - last < TYPING_THROTTLE_MS && now >= last) return false;
    const others = (await membersOf(this.db.kysely, [conversationId], now))
      .filter((m) => m.accountId !== accountId && m.state === 'member')
      .map((m) => m.accountId);
    if (others.length === 0) return false;
    for (const other of others) {
      if (await eitherBlocks(this.db.kysely, accountId, other)) return false;
    }
    const me = await findAccountNames(this.db.kysely, accountId);
    if (!me) throw notFound('account');
    this.lastSent.set(key, now);
    // Like every event of a direct conversation, it goes to each member's own topic. Typing is
    // at most once: the answer does not wait for Redis.
    for (const other of others) {
      void this.bus.publish({
        topic: userTopic(other),
        type: 'TypingStarted',
        at: now,
        payload: {
          audience: { kind: 'conversation', conversationId },
          serverId: access.workspaceId,
          conversationId,
          user_id: me.id,
          username: me.username,
          display_name: me.displayName ?? null,
        },
      });
    }
    return true;
  }
}
