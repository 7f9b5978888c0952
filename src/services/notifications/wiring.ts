import type { Logger } from 'pino';

import type { Authz } from '../authz/index.js';
import type { Config } from '../../config/index.js';
import type { Db } from '../../db/database.js';
import type { EventPort } from '../../events/port.js';
import type { Clock } from '../../lib/clock.js';
import type { RequestLoad } from '../../lib/request-load.js';
import type { Mailer } from '../../mail/mailer.js';
import { loadOrCreateVapidKeys } from '../instance/index.js';
import type { MessageService } from '../messages/index.js';
import type { PresenceService } from '../presence/index.js';

import { DigestMailer } from './digest.js';
import { NotificationService } from './notification-service.js';
import { pushContact, WebPush } from './push.js';

export interface NotificationWiring {
  config: Config;
  db: Db;
  events: EventPort;
  clock: Clock;
  log: Logger;
  authz: Authz;
  mailer: Mailer;
  /** The server's cookie secret (the unsubscribe token's key is derived from it). */
  secret: Buffer;
  presence: PresenceService;
  /** Requests being served: the fan-out runs its steps between them. */
  requestLoad: RequestLoad;
  messages: MessageService;
  /** Registers work for the context's close. */
  onClose(fn: () => Promise<void>): void;
  /** Whether this is the one server process (no Redis, not the command line). */
  soleProcess: boolean;
}

/**
 * Builds the notification area for the composition root (docs/notifications.md): the feed and
 * its fan-out, Web Push behind it, the mail digests. How it follows the other areas (the fan-out
 * after each message's commit, rules going with their workspace and the account purge) is
 * registered in wiring.ts.
 */
export async function buildNotifications(w: NotificationWiring) {
  const { config, db, clock, log, presence } = w;
  const notifications = new NotificationService({
    db,
    events: w.events,
    clock,
    log: log.child({ subsystem: 'notifications' }),
    authz: w.authz,
    connections: presence,
    load: w.requestLoad,
    markConversationRead: (actor, conversationId, messageId) =>
      w.messages.reading.markRead(actor, conversationId, messageId),
    soleProcess: w.soleProcess,
  });
  const webPush = new WebPush({
    db,
    clock,
    log: log.child({ subsystem: 'web-push' }),
    vapid: await loadOrCreateVapidKeys(db, clock),
    contact: pushContact({
      contact: config.notifications.pushContact,
      smtpFrom: config.smtp.from,
      publicBaseUrl: config.server.publicBaseUrl,
    }),
    allowPrivateEndpoints: config.notifications.pushAllowPrivateEndpoints,
    connections: presence,
  });
  // Queued fan-outs finish (and hand their pushes over) before the push agent closes.
  w.onClose(async () => {
    await notifications.settled();
    await webPush.close();
  });
  notifications.fanOut.onDelivered((rows, message) => webPush.deliver(rows, message));
  const digests = new DigestMailer({
    db,
    clock,
    log: log.child({ subsystem: 'digests' }),
    mailer: w.mailer,
    emailEnabled: config.features.find((f) => f.key === 'email')?.state !== 'disabled',
    awayMs: config.notifications.digestAwayMinutes * 60_000,
    intervalMs: config.notifications.digestIntervalMinutes * 60_000,
    publicBaseUrl: config.server.publicBaseUrl,
    secret: w.secret,
    connections: presence,
  });
  return { notifications, webPush, digests };
}
