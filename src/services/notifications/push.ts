import type { Logger } from 'pino';
import { Agent } from 'undici';
import webpush from 'web-push';

import type { Actor } from '../../auth/actor.js';
import { actingAccountId } from '../../auth/actor.js';
import type { Db } from '../../db/database.js';
import type { MessageTable } from '../../db/tables/messages.js';
import type { NotificationTable } from '../../db/tables/notifications.js';
import { validation } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import {
  literalAddress,
  publicConnect,
  RefusedAddressError,
  refusal,
} from '../../net/public-connector.js';
import type { VapidKeys } from '../instance/index.js';

import { conversationOf, settingsOf } from './queries.js';
import {
  deletePushSubscription,
  markPushed,
  pushSubscriptionsOf,
  savePushSubscription,
} from './push-queries.js';
import { doNotDisturb } from './rules.js';

/** Whether a person holds an open connection on any process (the presence area). */
export interface ConnectedPort {
  isConnected(accountId: string): Promise<boolean>;
}

export interface WebPushDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  vapid: VapidKeys;
  /** `mailto:` or `https:` contact the push services see (SVC_PUSH_CONTACT). */
  contact: string;
  /** SVC_PUSH_ALLOW_PRIVATE_ENDPOINTS: a push service on the local network is allowed. */
  allowPrivateEndpoints: boolean;
  connections: ConnectedPort;
}

/** Subscriptions a person may register; the oldest go first past it. */
export const MAX_SUBSCRIPTIONS_PER_USER = 20;
const TIMEOUT_MS = 10_000;
const BODY_EXCERPT = 140;

/**
 * Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm payload encryption (RFC 8291), both
 * done by the `web-push` package; the request goes out through an agent of our own that, unless
 * private endpoints are allowed, resolves the push service's name itself and connects only to a
 * public address (an endpoint is a URL a user gave us). Pushes go to people with no open
 * connection and not in do-not-disturb; a subscription the push service answers 404 or 410 for
 * is gone and is dropped.
 */
export class WebPush {
  private readonly agent: Agent;
  private inFlight = new Set<Promise<void>>();

  constructor(private readonly deps: WebPushDeps) {
    this.agent = new Agent({
      connect: publicConnect({
        timeoutMs: TIMEOUT_MS,
        allowPrivate: deps.allowPrivateEndpoints,
      }),
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
  }

  get publicKey(): string {
    return this.deps.vapid.publicKey;
  }

  /** Registers (or moves to the caller) a browser's push subscription. */
  async subscribe(
    actor: Actor,
    input: { endpoint?: unknown; p256dh?: unknown; auth?: unknown },
  ): Promise<string> {
    const accountId = actingAccountId(actor);
    const endpoint = this.checkEndpoint(input.endpoint);
    const p256dh = checkKey(input.p256dh, 65, 'p256dh (the P-256 public key, base64url)');
    const auth = checkKey(input.auth, 16, 'auth (the 16-byte secret, base64url)');
    const id = newId();
    await this.deps.db.transaction(async (tx) => {
      await savePushSubscription(tx.db, {
        id,
        accountId,
        endpoint,
        p256dh,
        auth,
        createdAt: this.deps.clock.now().getTime(),
        lastSuccessAt: null,
      });
      const mine = await pushSubscriptionsOf(tx.db, [accountId]);
      const extra = mine
        .sort((a, b) => b.createdAt - a.createdAt || (b.id < a.id ? -1 : 1))
        .slice(MAX_SUBSCRIPTIONS_PER_USER);
      for (const s of extra) await deletePushSubscription(tx.db, { id: s.id });
    });
    return endpoint;
  }

  /** Removes the caller's subscription with that endpoint; true when there was one. */
  async unsubscribe(actor: Actor, endpoint: unknown): Promise<boolean> {
    const accountId = actingAccountId(actor);
    if (typeof endpoint !== 'string') throw validation('endpoint must be a string');
    let n = 0;
    await this.deps.db.transaction(async (tx) => {
      n = await deletePushSubscription(tx.db, { endpoint, accountId });
    });
    return n > 0;
  }

  private checkEndpoint(value: unknown): string {
    if (typeof value !== 'string' || value.length > 2048) {
      throw validation('endpoint must be the push subscription URL (at most 2048 characters)');
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw validation('endpoint is not a URL');
    }
    if (url.username || url.password) throw validation('endpoint must not carry credentials');
    if (this.deps.allowPrivateEndpoints) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw validation('endpoint must be an https URL');
      }
    } else {
      if (url.protocol !== 'https:') throw validation('endpoint must be an https URL');
      const literal = literalAddress(url.hostname);
      if (literal && refusal(literal.toString())) {
        throw validation('endpoint must be a push service on a public address');
      }
    }
    return url.toString();
  }

  /**
   * Pushes a batch of new notifications to those of their people who have subscriptions, no
   * open connection and no do-not-disturb. Runs in the background; `settled` waits for it.
   */
  deliver(rows: readonly NotificationTable[], message: MessageTable): Promise<void> {
    const run = this.deliverNow(rows, message)
      .catch((err: unknown) => this.deps.log.warn({ err }, 'web push failed'))
      .finally(() => this.inFlight.delete(run));
    this.inFlight.add(run);
    return run;
  }

  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async deliverNow(rows: readonly NotificationTable[], message: MessageTable) {
    const db = this.deps.db.kysely;
    const byAccount = new Map(rows.map((r) => [r.accountId, r]));
    const subs = await pushSubscriptionsOf(db, [...byAccount.keys()]);
    if (subs.length === 0) return;
    const now = this.deps.clock.now().getTime();
    const settings = new Map(
      (await settingsOf(db, [...new Set(subs.map((s) => s.accountId))])).map((s) => [
        s.accountId,
        s,
      ]),
    );
    const conv = await conversationOf(db, message.conversationId);
    const encrypted = conv?.encrypted === 1 || message.ciphertext !== null;
    const author = await db
      .selectFrom('account')
      .select(['username', 'displayName'])
      .where('id', '=', message.authorId)
      .executeTakeFirst();
    const connected = new Map<string, boolean>();
    for (const sub of subs) {
      const n = byAccount.get(sub.accountId) as NotificationTable;
      if (doNotDisturb(settings.get(sub.accountId), now)) continue;
      if (!connected.has(sub.accountId)) {
        connected.set(sub.accountId, await this.deps.connections.isConnected(sub.accountId));
      }
      if (connected.get(sub.accountId)) continue;
      const who = author?.displayName ?? author?.username ?? 'Someone';
      const where = conv?.kind === 'channel' && conv.name ? ` in #${conv.name}` : '';
      const payload = {
        id: n.id,
        kind: n.kind.toUpperCase(),
        serverId: n.workspaceId,
        conversationId: n.conversationId,
        messageId: n.messageId,
        threadRootId: n.threadRootId,
        title: encrypted ? 'New encrypted message' : `${who}${where}`,
        // An encrypted conversation's push says only that a message arrived.
        body: encrypted ? null : excerpt(message.text ?? ''),
        encrypted,
        createdAt: new Date(n.createdAt).toISOString(),
      };
      await this.send(sub, JSON.stringify(payload), now);
    }
  }

  private async send(
    sub: { id: string; endpoint: string; p256dh: string; auth: string },
    payload: string,
    now: number,
  ) {
    const details = webpush.generateRequestDetails(
      { endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } },
      payload,
      {
        vapidDetails: {
          subject: this.deps.contact,
          publicKey: this.deps.vapid.publicKey,
          privateKey: this.deps.vapid.privateKey,
        },
        TTL: 24 * 60 * 60,
        urgency: 'high',
        contentEncoding: 'aes128gcm',
      },
    );
    const url = new URL(details.endpoint);
    let res;
    try {
      res = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: details.headers as Record<string, string>,
        body: details.body ?? undefined,
      });
    } catch (err) {
      if (!(err instanceof RefusedAddressError)) throw err;
      // Logged by the caller as "web push failed", naming the endpoint's range.
      throw new Error(`refused push endpoint ${err.host} (${err.address}): ${err.range}`);
    }
    res.body.resume();
    const status = res.statusCode;
    if (status === 404 || status === 410) {
      // The push service says the subscription is gone (RFC 8030, 7.3): drop it.
      await this.deps.db.transaction((tx) => deletePushSubscription(tx.db, { id: sub.id }));
      this.deps.log.info({ status }, 'push subscription gone; dropped');
    } else if (status >= 200 && status < 300) {
      await this.deps.db.transaction((tx) => markPushed(tx.db, sub.id, now));
    } else {
      this.deps.log.warn({ status, host: url.host }, 'push service refused a push');
    }
  }

  async close(): Promise<void> {
    await this.settled();
    await this.agent.close();
  }
}

function excerpt(text: string): string {
  const chars = [...text];
  return chars.length > BODY_EXCERPT ? `${chars.slice(0, BODY_EXCERPT - 1).join('')}…` : text;
}

function checkKey(value: unknown, bytes: number, what: string): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]+={0,2}$/.test(value)) {
    throw validation(`${what} is missing or not base64url`);
  }
  const raw = Buffer.from(value, 'base64url');
  if (raw.length !== bytes) throw validation(`${what} must be ${bytes} bytes`);
  return raw.toString('base64url');
}

/** The VAPID contact: SVC_PUSH_CONTACT, else the sender address or the public base URL. */
export function pushContact(opts: {
  contact: string | null;
  smtpFrom: string | null;
  publicBaseUrl: string | null;
}): string {
  if (opts.contact) return opts.contact;
  const address = opts.smtpFrom?.match(/<([^>]+)>/)?.[1] ?? opts.smtpFrom;
  if (address && address.includes('@')) return `mailto:${address.trim()}`;
  if (opts.publicBaseUrl?.startsWith('https:')) return opts.publicBaseUrl;
  return 'mailto:postmaster@localhost.invalid';
}
