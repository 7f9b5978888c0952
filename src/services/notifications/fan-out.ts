import type { Logger } from 'pino';

import type { Db } from '../../db/database.js';
import type { ConversationTable } from '../../db/tables/conversations.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type {
  NotificationKindValue,
  NotificationRuleTable,
  NotificationSettingTable,
  NotificationTable,
} from '../../db/tables/notifications.js';
import type { EventPort } from '../../events/port.js';
import { userTopic } from '../../events/catalog.js';
import { emit } from '../../events/publish.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { Lru } from '../../lib/lru.js';
import type { RequestLoad } from '../../lib/request-load.js';
import { atLeast } from '../../auth/policy.js';
import { readMentions } from '../messages/index.js';
import { findMember } from '../workspaces/index.js';

import {
  blockersOf,
  conversationOf,
  findPolicy,
  insertNotifications,
  memberPage,
  membersOfAmong,
  rulesFor,
  settingsOf,
  threadParticipants,
} from './queries.js';
import { effectiveLevel, levelAllows, matchesKeyword, readKeywords, stronger } from './rules.js';
import type { WantingMore } from './wanting-more.js';

/** Who of some accounts is connected, or shown online (the presence area). */
export interface ConnectionPort {
  /** Accounts shown online now (for @here). */
  onlineAmong(accountIds: readonly string[]): Promise<Set<string>>;
}

/**
 * Told of each batch of notifications once it is committed (Web Push). It must not block; the
 * promise it may return is only waited for by `settled`.
 */
export type DeliveredHook = (
  rows: readonly NotificationTable[],
  message: MessageTable,
) => void | Promise<void>;

/** The fixed facts of a conversation the fan-out works from. */
type ConversationFacts = Pick<
  ConversationTable,
  'id' | 'workspaceId' | 'kind' | 'encrypted' | 'isPrivate'
>;

/** Rows written per transaction: a 10,000-member @channel is 40 short transactions. */
const BATCH = 250;

/**
 * While requests arrive (one within the last 100 ms), steps are smaller: a request that comes
 * in while a step runs waits for the step, 2-3 ms for 50 rows against 12-15 ms for 250.
 */
const BATCH_WHILE_REQUESTS = 50;

/** Members of a channel read per step for @channel and @here; 1,000 while requests arrive. */
const PAGE = 5000;
const PAGE_WHILE_REQUESTS = 1000;

/** The longest a step ever waits for the requests being served to be answered (`giveWay`). */
export const GIVE_WAY_MS = 50;

/**
 * Queued messages whose recipients are worked out together (bounded: an `@channel` in a channel
 * of thousands holds each of them in memory until its turn to be written).
 */
const READ_AHEAD = 16;

/**
 * Works out who a new message notifies and writes their notifications, after the message's
 * transaction committed (docs/notifications.md, "Fan-out"). Work is queued; the recipients of
 * up to READ_AHEAD queued messages are read together, then notifications are written one message
 * at a time per process, in batches of 250 recipients, each its own short transaction followed
 * by `NotificationCreated` on each recipient's own topic; so the send that triggered it never
 * waits, and a large channel never holds the database for long. Each step (a page of members,
 * a batch) starts between requests and is smaller while they arrive (`giveWay`).
 */
export class FanOut {
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private readonly queue: MessageTable[] = [];
  private draining = false;
  private readonly delivered: DeliveredHook[] = [];
  private readonly background = new Set<Promise<void>>();
  private readonly facts = new Lru<string, ConversationFacts>(10_000);
  /** How long the fan-out's last step (a page of members, a batch) took; `giveWay`'s longest wait. */
  private lastStepMs: number | undefined = undefined;

  constructor(
    private readonly deps: {
      db: Db;
      events: EventPort;
      clock: Clock;
      log: Logger;
      connections: ConnectionPort;
      load?: RequestLoad;
      /** Who of a channel wants more than mentions (wanting-more.ts). */
      wantingMore: WantingMore;
      /** GIVE_WAY_MS unless given (tests). */
      giveWayMs?: number;
    },
  ) {}

  onDelivered(hook: DeliveredHook): void {
    this.delivered.push(hook);
  }

  /** Queues a committed message; returns at once. */
  enqueue(message: MessageTable): void {
    this.pending++;
    this.queue.push(message);
    if (!this.draining) {
      this.draining = true;
      this.chain = this.drain().finally(() => {
        this.draining = false;
      });
    }
  }

  /**
   * Works through the queue: who each message notifies is read for up to READ_AHEAD queued
   * messages at once (their reads go together, one statement on PostgreSQL), then their
   * notifications are written one message at a time, in the order they were sent.
   */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, READ_AHEAD);
      const found = await Promise.all(
        batch.map((m) => this.candidates(m).catch((err: unknown) => ({ failed: err }))),
      );
      for (let i = 0; i < batch.length; i += 1) {
        const message = batch[i] as MessageTable;
        const result = found[i];
        try {
          if (result && 'failed' in result) throw result.failed;
          await this.write(message, result);
        } catch (err) {
          this.deps.log.error({ err, messageId: message.id }, 'notification fan-out failed');
        } finally {
          this.pending--;
        }
      }
    }
  }

  /** Resolves once every queued message, and what its hooks started, is done (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending > 0 || this.background.size > 0) {
      await this.chain;
      await Promise.allSettled([...this.background]);
    }
  }

  /**
   * What the fan-out needs of a conversation never changes once it exists (its workspace, kind,
   * privacy and encryption), so it is read once per conversation and kept.
   */
  private async factsOf(conversationId: string): Promise<ConversationFacts | undefined> {
    const known = this.facts.get(conversationId);
    if (known) return known;
    const row = await conversationOf(this.deps.db.kysely, conversationId);
    if (!row) return undefined;
    const facts: ConversationFacts = {
      id: row.id,
      workspaceId: row.workspaceId,
      kind: row.kind,
      encrypted: row.encrypted,
      isPrivate: row.isPrivate,
    };
    this.facts.set(conversationId, facts);
    return facts;
  }

  private now(): number {
    return this.deps.clock.now().getTime();
  }

  /** Recipients and why, before levels and rules are applied. */
  private async candidates(message: MessageTable) {
    const db = this.deps.db.kysely;
    const conv = await this.factsOf(message.conversationId);
    if (!conv || message.deletedAt !== null) return null;
    const encrypted = conv.encrypted === 1 || message.ciphertext !== null;
    const reasons = new Map<string, NotificationKindValue>();
    const add = (id: string, kind: NotificationKindValue) => {
      if (id !== message.authorId && stronger(kind, reasons.get(id))) reasons.set(id, kind);
    };
    // Mentions, keywords and @channel need the text: an encrypted message has none, and is
    // notified by its metadata only (a message arrived, in a thread or not).
    if (!encrypted && message.text !== null) {
      const mentions = readMentions(message.mentions);
      for (const id of mentions.users) add(id, 'mention');
      if ((mentions.channel || mentions.here) && (await this.mayMentionAll(conv, message))) {
        for (let after: string | null = null; ;) {
          await this.giveWay();
          const started = performance.now();
          const page = await memberPage(db, conv.id, after, this.stepOf(PAGE, PAGE_WHILE_REQUESTS));
          if (page.length === 0) break;
          const online = mentions.channel ? null : await this.deps.connections.onlineAmong(page);
          for (const id of page) if (!online || online.has(id)) add(id, 'channel');
          this.lastStepMs = performance.now() - started;
          after = page[page.length - 1] as string;
        }
      }
    }
    if (message.threadRootId !== null) {
      for (const id of await threadParticipants(db, message.threadRootId)) add(id, 'thread_reply');
    }
    if (conv.kind !== 'channel') {
      for (const id of await memberPage(db, conv.id, null, 1000)) add(id, 'direct');
    } else if (message.threadRootId === null) {
      for (const s of await this.deps.wantingMore.members(conv.id, conv.workspaceId)) {
        if (!encrypted && message.text !== null) {
          if (matchesKeyword(message.text, readKeywords(s.keywords))) add(s.accountId, 'keyword');
        }
        if (s.level === 'all') add(s.accountId, 'message');
      }
    }
    return { conv, reasons };
  }

  /**
   * Before each step: while requests arrive, lets the event loop take in those that are waiting
   * (the steps' reads and writes on SQLite do not wait for it), then waits until no request is
   * being served, so that none waits for a step: no longer than the last step took, and never
   * more than GIVE_WAY_MS.
   */
  private async giveWay(): Promise<void> {
    const load = this.deps.load;
    if (!load) return;
    if (load.recent()) await new Promise((resolve) => setImmediate(resolve));
    // No longer than the last step took: under requests that never pause, the fan-out still has
    // at least a third of the process (a wait, a step, the rest after a batch).
    const longest = this.deps.giveWayMs ?? GIVE_WAY_MS;
    await load.between(Math.min(this.lastStepMs ?? longest, longest));
  }

  /** How much a step takes on: `whileRequests` when requests arrived within the last 100 ms. */
  private stepOf(quiet: number, whileRequests: number): number {
    return this.deps.load?.recent() ? whileRequests : quiet;
  }

  /** @channel and @here in a workspace's channels follow its policy; anyone may in the direct space. */
  private async mayMentionAll(
    conv: { kind: string; workspaceId: string },
    message: MessageTable,
  ): Promise<boolean> {
    if (conv.kind !== 'channel') return true;
    const policy = await findPolicy(this.deps.db.kysely, conv.workspaceId);
    const who = policy?.channelMentions ?? 'everyone';
    if (who === 'everyone') return true;
    if (who === 'nobody') return false;
    const author = await findMember(this.deps.db.kysely, conv.workspaceId, message.authorId);
    return !!author && atLeast(author.role, 'moderator');
  }

  private async write(
    message: MessageTable,
    found: Awaited<ReturnType<FanOut['candidates']>>,
  ): Promise<void> {
    if (!found || found.reasons.size === 0) return;
    const { conv, reasons } = found;
    const db = this.deps.db.kysely;
    const recipients = [...reasons.keys()];
    for (let at = 0; at < recipients.length;) {
      await this.giveWay();
      const ids = recipients.slice(at, (at += this.stepOf(BATCH, BATCH_WHILE_REQUESTS)));
      const started = performance.now();
      // Members only: not invitees of an encrypted conversation, not people who left.
      const members = await membersOfAmong(db, conv.id, ids);
      if (members.length === 0) continue;
      const blockers = await blockersOf(db, message.authorId, members);
      const settings = new Map<string, NotificationSettingTable>(
        (await settingsOf(db, members)).map((s) => [s.accountId, s]),
      );
      const rules = new Map<string, NotificationRuleTable>(
        (await rulesFor(db, members, [conv.id, conv.workspaceId])).map((r) => [
          `${r.scopeId}/${r.accountId}`,
          r,
        ]),
      );
      const now = this.now();
      const rows: NotificationTable[] = [];
      for (const id of members) {
        if (blockers.has(id)) continue;
        const kind = reasons.get(id) as NotificationKindValue;
        const level = effectiveLevel(
          settings.get(id),
          rules.get(`${conv.id}/${id}`),
          rules.get(`${conv.workspaceId}/${id}`),
          conv.kind,
          now,
        );
        if (!levelAllows(level, kind)) continue;
        rows.push({
          id: newId(),
          accountId: id,
          kind,
          messageId: message.id,
          conversationId: conv.id,
          workspaceId: conv.workspaceId,
          threadRootId: message.threadRootId,
          actorId: message.authorId,
          createdAt: message.createdAt,
          readAt: null,
          mailedAt: null,
        });
      }
      if (rows.length === 0) continue;
      await this.deps.db.transaction(async (tx) => {
        await insertNotifications(tx.db, rows);
        for (const n of rows) {
          emit(tx, this.deps.events, userTopic(n.accountId), 'NotificationCreated', now, {
            audience: { kind: 'users', userIds: [n.accountId] },
            serverId: n.workspaceId,
            conversationId: n.conversationId,
            notification: notificationPayload(n, conv.encrypted === 1),
          });
        }
        tx.onCommit(() => {
          for (const hook of this.delivered) {
            try {
              const work = hook(rows, message);
              if (work) {
                this.background.add(work);
                void work.then(
                  () => this.background.delete(work),
                  () => this.background.delete(work),
                );
              }
            } catch (err) {
              this.deps.log.error({ err }, 'notification hook failed');
            }
          }
        });
      });
      // Sends come first: after each batch the fan-out rests as long as the batch took (at
      // most 50 ms), so requests get at least half of the process and of the database's writer
      // while a large channel is being notified.
      this.lastStepMs = performance.now() - started;
      const rest = Math.min(this.lastStepMs, 50);
      await new Promise((resolve) => setTimeout(resolve, rest));
    }
  }
}

/** A notification as `NotificationCreated` carries it (docs/events.md): metadata only. */
export function notificationPayload(n: NotificationTable, encrypted: boolean) {
  return {
    id: n.id,
    kind: n.kind.toUpperCase(),
    messageId: n.messageId,
    conversationId: n.conversationId,
    serverId: n.workspaceId,
    threadRootId: n.threadRootId,
    actorId: n.actorId,
    encrypted,
    createdAt: new Date(n.createdAt).toISOString(),
  };
}
