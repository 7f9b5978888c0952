import type { Logger } from 'pino';

import { actingAccountId, type Actor } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import { DIRECT_SPACE_ID } from '../../db/direct-space.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type {
  NotificationLevelValue,
  NotificationRuleTable,
  NotificationSettingTable,
  WorkspaceNotificationPolicyTable,
} from '../../db/tables/notifications.js';
import type { Tx } from '../../db/transaction.js';
import { forbidden, notFound, validation } from '../../errors.js';
import type { EventPort } from '../../events/port.js';
import { userTopic } from '../../events/catalog.js';
import { emit } from '../../events/publish.js';
import { DAY_MS, type Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import type { RequestLoad } from '../../lib/request-load.js';
import type { Authz } from '../authz/index.js';
import {
  assertReadable,
  plausibleId,
  cursorOf,
  parsePageArgs,
  findConversationAccess,
  lastMessages,
  type Page,
  type PageArgs,
} from '../conversations/index.js';

import { FanOut, type ConnectionPort } from './fan-out.js';
import { WantingMore } from './wanting-more.js';
import {
  deleteAccountRows,
  deleteOlderThan,
  deleteRule,
  deleteWorkspaceRows,
  feedPage,
  findNotification,
  findPolicy,
  findSetting,
  markRead,
  rulesOfAccount,
  saveRule,
  savePolicy,
  saveSetting,
  unreadByConversation,
  unreadTotal,
  type FeedRow,
} from './queries.js';
import { checkClockTime, checkKeywords, checkTimeZone, defaultSetting, LEVELS } from './rules.js';
import {
  toRuleView,
  toSettingsView,
  type NotificationRuleView,
  type NotificationSettingsView,
} from './views.js';

export interface NotificationServiceDeps {
  db: Db;
  events: EventPort;
  clock: Clock;
  log: Logger;
  authz: Authz;
  connections: ConnectionPort;
  /** Requests being served, which the fan-out gives way to. */
  load?: RequestLoad;
  /** Moves the caller's read marker (the messages area's `markRead`). */
  markConversationRead(actor: Actor, conversationId: string, messageId: string): Promise<unknown>;
  /**
   * Whether every change of settings and rules passes through this process (one server on the
   * in-process bus): then who could want more than mentions is kept in memory (wanting-more.ts).
   */
  soleProcess?: boolean;
}

/** Days a notification is kept (docs/notifications.md, "The feed"). */
export const RETENTION_DAYS = 90;

export type ChannelMentionPolicy = WorkspaceNotificationPolicyTable['channelMentions'];
const POLICIES: readonly ChannelMentionPolicy[] = ['everyone', 'moderators', 'nobody'];

export interface SettingsInput {
  level?: unknown;
  keywords?: unknown;
  timeZone?: unknown;
  /** `HH:MM`; both or neither; null clears the quiet hours. */
  quietHoursStart?: unknown;
  quietHoursEnd?: unknown;
  /** ISO time; null ends do-not-disturb. */
  doNotDisturbUntil?: unknown;
  emailDigests?: unknown;
}

export interface RuleInput {
  serverId?: unknown;
  conversationId?: unknown;
  level?: unknown;
  mutedUntil?: unknown;
}

/**
 * Notifications (docs/notifications.md): settings, scoped rules, the channel-wide mention
 * policy, the feed with its read state and counts, and the fan-out of new messages.
 */
export class NotificationService {
  readonly fanOut: FanOut;

  /** Who could want more than mentions (wanting-more.ts). */
  readonly wantingMore: WantingMore;

  constructor(private readonly deps: NotificationServiceDeps) {
    this.wantingMore = new WantingMore(deps.db, deps.soleProcess ?? false);
    this.fanOut = new FanOut({ ...deps, wantingMore: this.wantingMore });
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  private get kysely() {
    return this.deps.db.kysely;
  }

  /** A message committed (plaintext or encrypted): its notifications are made in the background. */
  messageCreated(message: MessageTable): void {
    this.fanOut.enqueue(message);
  }

  /** Resolves once every queued fan-out is done. */
  settled(): Promise<void> {
    return this.fanOut.settled();
  }

  // ---- settings

  async settings(actor: Actor): Promise<NotificationSettingsView> {
    return toSettingsView(await this.settingRow(actor), this.now());
  }

  private async settingRow(actor: Actor): Promise<NotificationSettingTable> {
    const accountId = actingAccountId(actor);
    return (await findSetting(this.kysely, accountId)) ?? defaultSetting(accountId, this.now());
  }

  async updateSettings(actor: Actor, input: SettingsInput): Promise<NotificationSettingsView> {
    const accountId = actingAccountId(actor);
    const now = this.now();
    const row = { ...(await this.settingRow(actor)), updatedAt: now };
    if (input.level !== undefined)
      row.level = checkLevel(input.level, false) as NotificationLevelValue;
    if (input.keywords !== undefined) row.keywords = JSON.stringify(checkKeywords(input.keywords));
    if (input.timeZone !== undefined) row.timeZone = checkTimeZone(input.timeZone);
    const start = input.quietHoursStart;
    const end = input.quietHoursEnd;
    if (start !== undefined || end !== undefined) {
      if (start === null && end === null) {
        row.quietStart = null;
        row.quietEnd = null;
      } else {
        if (start === undefined || end === undefined || start === null || end === null) {
          throw validation('give quietHoursStart and quietHoursEnd together (or both null)');
        }
        row.quietStart = checkClockTime(start, 'quietHoursStart');
        row.quietEnd = checkClockTime(end, 'quietHoursEnd');
      }
    }
    if (input.doNotDisturbUntil !== undefined) {
      row.dndUntil = input.doNotDisturbUntil === null ? null : checkTime(input.doNotDisturbUntil);
    }
    if (input.emailDigests !== undefined) {
      if (typeof input.emailDigests !== 'boolean') throw validation('emailDigests is a boolean');
      row.emailDigests = input.emailDigests ? 1 : 0;
    }
    await this.deps.db.transaction((tx) => {
      this.wantingMore.changing(tx);
      return saveSetting(tx.db, { ...row, accountId });
    });
    return toSettingsView(row, now);
  }

  // ---- rules

  async rules(actor: Actor): Promise<NotificationRuleView[]> {
    return (await rulesOfAccount(this.kysely, actingAccountId(actor))).map(toRuleView);
  }

  /**
   * Sets the caller's rule for a workspace (`serverId`) or a conversation (`conversationId`);
   * a rule with neither a level nor a mute is removed. Answers the rule (null once removed).
   */
  async setRule(actor: Actor, input: RuleInput): Promise<NotificationRuleView | null> {
    const accountId = actingAccountId(actor);
    const now = this.now();
    const level =
      input.level === undefined || input.level === null ? null : checkLevel(input.level, false);
    const mutedUntil =
      input.mutedUntil === undefined || input.mutedUntil === null
        ? null
        : checkTime(input.mutedUntil);
    let scope: { scopeId: string; workspaceId: string; conversationId: string | null };
    if (input.conversationId !== undefined && input.conversationId !== null) {
      if (input.serverId !== undefined && input.serverId !== null) {
        throw validation('give either serverId or conversationId, not both');
      }
      if (!plausibleId(input.conversationId)) throw notFound('conversation');
      const access = assertReadable(
        await findConversationAccess(this.kysely, input.conversationId, accountId),
        now,
      );
      if (!access.isMember) throw forbidden('join the channel first');
      scope = {
        scopeId: access.row.id,
        workspaceId: access.row.workspaceId,
        conversationId: access.row.id,
      };
    } else if (typeof input.serverId === 'string') {
      if (input.serverId === DIRECT_SPACE_ID) {
        throw validation('the direct space has no workspace rule: set one per conversation');
      }
      if (!isId(input.serverId)) throw notFound('workspace');
      await this.deps.authz.requireMember(actor, { workspaceId: input.serverId });
      scope = { scopeId: input.serverId, workspaceId: input.serverId, conversationId: null };
    } else {
      throw validation('give serverId (a workspace rule) or conversationId (a conversation rule)');
    }
    const row: NotificationRuleTable = { ...scope, accountId, level, mutedUntil, updatedAt: now };
    await this.deps.db.transaction(async (tx) => {
      this.wantingMore.changing(tx);
      if (level === null && mutedUntil === null) await deleteRule(tx.db, accountId, scope.scopeId);
      else await saveRule(tx.db, row);
    });
    return level === null && mutedUntil === null ? null : toRuleView(row);
  }

  /** The caller's rule for each conversation (for `Conversation.notificationRule`). */
  async conversationRules(
    actor: Actor,
    conversationIds: readonly string[],
  ): Promise<(NotificationRuleView | null)[]> {
    const rules = await rulesOfAccount(this.kysely, actingAccountId(actor));
    const byId = new Map(rules.map((r) => [r.scopeId, r]));
    return conversationIds.map((id) => {
      const rule = byId.get(id);
      return rule ? toRuleView(rule) : null;
    });
  }

  // ---- the workspace policy

  async channelMentionPolicy(actor: Actor, workspaceId: string): Promise<ChannelMentionPolicy> {
    if (workspaceId === DIRECT_SPACE_ID) return 'everyone';
    if (!(await this.deps.authz.membership(actor, { workspaceId }))) return 'everyone';
    return (await findPolicy(this.kysely, workspaceId))?.channelMentions ?? 'everyone';
  }

  /** Who may use @channel and @here in the workspace's channels (Moderators and the owner). */
  async setChannelMentionPolicy(
    actor: Actor,
    workspaceId: unknown,
    policy: unknown,
  ): Promise<ChannelMentionPolicy> {
    if (typeof workspaceId !== 'string' || !isId(workspaceId)) throw notFound('workspace');
    if (workspaceId === DIRECT_SPACE_ID) {
      throw validation('the direct space has no workspace settings');
    }
    const value =
      typeof policy === 'string' ? (policy.toLowerCase() as ChannelMentionPolicy) : null;
    if (!value || !POLICIES.includes(value)) {
      throw validation('channelMentions is one of EVERYONE, MODERATORS, NOBODY');
    }
    await this.deps.authz.assertCan(actor, 'workspace:update', { workspaceId });
    await this.deps.db.transaction((tx) =>
      savePolicy(tx.db, { workspaceId, channelMentions: value, updatedAt: this.now() }),
    );
    return value;
  }

  // ---- the feed

  /** The caller's notifications, newest first (keyset pages). */
  async feed(
    actor: Actor,
    args: PageArgs & { unreadOnly?: boolean | null; conversationId?: unknown },
  ): Promise<Page<FeedRow> & { unreadCount: number }> {
    const accountId = actingAccountId(actor);
    const parsed = parsePageArgs(args);
    let conversationId: string | undefined;
    if (args.conversationId !== undefined && args.conversationId !== null) {
      if (!plausibleId(args.conversationId)) throw notFound('conversation');
      conversationId = args.conversationId;
    }
    const { rows, more } = await feedPage(this.kysely, accountId, {
      ...parsed,
      unreadOnly: args.unreadOnly === true,
      conversationId,
    });
    const first = rows[0];
    const last = rows[rows.length - 1];
    const cur = (r: FeedRow | undefined) => (r ? cursorOf(r.createdAt, r.id) : null);
    // As every list: nextCursor goes on in the direction asked, prevCursor goes back.
    const cursors = parsed.before
      ? { nextCursor: more ? cur(first) : null, prevCursor: cur(last) }
      : { nextCursor: more ? cur(last) : null, prevCursor: parsed.after ? cur(first) : null };
    return {
      items: rows,
      hasMore: more,
      ...cursors,
      unreadCount: await unreadTotal(this.kysely, accountId),
    };
  }

  /** Unread notifications in each conversation, as the feed counts them. */
  async unreadCounts(actor: Actor, conversationIds: readonly string[]) {
    return unreadByConversation(this.kysely, actingAccountId(actor), conversationIds);
  }

  /** Marks one notification read. NOT_FOUND for another person's or a hidden one. */
  async markRead(actor: Actor, id: unknown): Promise<FeedRow> {
    const accountId = actingAccountId(actor);
    if (typeof id !== 'string' || !isId(id)) throw notFound('notification');
    const before = await findNotification(this.kysely, accountId, id);
    if (!before) throw notFound('notification');
    const now = this.now();
    await this.deps.db.transaction(async (tx) => {
      if ((await markRead(tx.db, accountId, now, { id })) > 0) {
        this.announceRead(tx, accountId, id, false, now);
      }
    });
    const { isUnread: _u, ...row } = before;
    return { ...row, readAt: row.readAt ?? now, unread: false };
  }

  /**
   * Marks a conversation read: its notifications, threads' included, and the read marker moved
   * to its newest message, so its unread count and the feed agree at zero.
   */
  async markConversationRead(actor: Actor, conversationId: unknown): Promise<number> {
    const accountId = actingAccountId(actor);
    if (!plausibleId(conversationId)) throw notFound('conversation');
    const now = this.now();
    const access = assertReadable(
      await findConversationAccess(this.kysely, conversationId, accountId),
      now,
    );
    if (!access.isMember) throw forbidden('join the channel first');
    // What the feed showed unread, counted before the marker moves.
    const marked =
      (await unreadByConversation(this.kysely, accountId, [conversationId])).get(conversationId) ??
      0;
    const [newest] = await lastMessages(this.kysely, [conversationId]);
    if (newest) await this.deps.markConversationRead(actor, conversationId, newest.id);
    await this.deps.db.transaction(async (tx) => {
      if ((await markRead(tx.db, accountId, now, { conversationId })) > 0) {
        this.announceRead(tx, accountId, null, false, now, conversationId);
      }
    });
    return marked;
  }

  /** Marks every notification of the caller read (read markers stay where they are). */
  async markAllRead(actor: Actor): Promise<number> {
    const accountId = actingAccountId(actor);
    const now = this.now();
    const marked = await unreadTotal(this.kysely, accountId);
    await this.deps.db.transaction(async (tx) => {
      if ((await markRead(tx.db, accountId, now, {})) > 0) {
        this.announceRead(tx, accountId, null, true, now);
      }
    });
    return marked;
  }

  private announceRead(
    tx: Tx,
    accountId: string,
    notificationId: string | null,
    all: boolean,
    now: number,
    conversationId?: string,
  ) {
    emit(tx, this.deps.events, userTopic(accountId), 'NotificationsRead', now, {
      audience: { kind: 'users', userIds: [accountId] },
      serverId: DIRECT_SPACE_ID,
      ...(conversationId ? { conversationId } : {}),
      notificationId,
      all,
    });
  }

  // ---- deletion

  /**
   * Notifications older than 90 days go, read or not (the `notification-retention` job), in
   * batches of 5,000 per transaction; a 10,000-member @channel is 10,000 rows.
   */
  async pruneOld(): Promise<number> {
    const before = this.now() - RETENTION_DAYS * DAY_MS;
    let total = 0;
    for (;;) {
      let n = 0;
      await this.deps.db.transaction(async (tx) => {
        n = await deleteOlderThan(tx.db, before, 5000);
      });
      total += n;
      if (n < 5000) return total;
    }
  }

  /** A workspace's scoped rules, policy and notifications go with it (deletion hook). */
  async onWorkspaceDeleted(tx: Tx, workspaceId: string): Promise<void> {
    await deleteWorkspaceRows(tx.db, workspaceId);
  }

  /** The account purge removes the account's settings, rules, feed and push subscriptions. */
  async onAccountPurged(tx: Tx, accountId: string): Promise<void> {
    await deleteAccountRows(tx.db, accountId);
  }
}

function checkLevel(value: unknown, allowNull: boolean): NotificationLevelValue | null {
  if (value === null && allowNull) return null;
  const v = typeof value === 'string' ? value.toLowerCase() : '';
  if (!LEVELS.includes(v as NotificationLevelValue)) {
    throw validation('level is one of ALL, MENTIONS, NOTHING');
  }
  return v as NotificationLevelValue;
}

function checkTime(value: unknown): number {
  // GraphQL's DateTime arrives as a Date; the service also takes RFC 3339 text.
  const t =
    value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
  if (!Number.isFinite(t)) throw validation('expected an RFC 3339 date and time');
  return t;
}
