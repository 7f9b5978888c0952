import type { Logger } from 'pino';

import { featureEnabled, type Config } from './config/index.js';
import type { Db } from './db/database.js';
import type { EventBus } from './events/bus.js';
import type { Outbox } from './events/outbox.js';
import type { EventPort } from './events/port.js';
import type { Clock } from './lib/clock.js';
import type { RequestLoad } from './lib/request-load.js';
import type { Mailer } from './mail/mailer.js';
import type { Metrics } from './metrics.js';
import type { SafeFetch } from './net/safe-fetch.js';
import type { ServerKeys } from './services/instance/index.js';
import { RedisBus } from './events/redis-bus.js';
import {
  AccountService,
  Avatars,
  AccountViewCache,
  PasswordResetService,
} from './services/accounts/index.js';
import { NewestPages, MessageService, MessageRemover } from './services/messages/index.js';
import { Authz } from './services/authz/index.js';
import { IpBlockService } from './services/ip-blocks/index.js';
import { AuditLog } from './services/audit/index.js';
import { ModerationService } from './services/moderation/index.js';
import { SessionService } from './services/sessions/index.js';
import { AccountDeletionService } from './services/account-deletion/index.js';
import { DeviceService, KeyAuthService, KeyChallenges } from './services/devices/index.js';
import { RegistrationService, SignupPolicy } from './services/registration/index.js';
import { ChannelService } from './services/channels/index.js';
import { findMember, InviteService, WorkspaceService } from './services/workspaces/index.js';
import { ConversationService } from './services/conversations/index.js';
import { DmService } from './services/dm/index.js';
import { HeldTerms, SearchService } from './services/search/index.js';
import { PresenceService, TypingService, type PresenceTimings } from './services/presence/index.js';
import { RealtimeService } from './services/realtime/index.js';
import { FileStorage } from './services/files/index.js';
import { AttachmentService } from './services/attachments/index.js';
import { MlsService } from './services/mls/index.js';
import { DataExportService } from './services/data-export/index.js';
import { EmojiService } from './services/emoji/index.js';
import { PluginService } from './services/plugins/index.js';
import { LinkPreviewService } from './services/link-previews/index.js';
import { CommandSystem } from './services/commands/index.js';
import { buildNotifications } from './services/notifications/index.js';
import type { Services } from './services/index.js';
import { buildFederation, type Federation } from './federation/index.js';

/** What the services are built on: opened first, closed last. */
export interface Infrastructure {
  config: Config;
  log: Logger;
  clock: Clock;
  db: Db;
  bus: EventBus;
  /** Where every transactional event is written, and the drainer of rows others left. */
  outbox: Outbox;
  keys: ServerKeys;
  /** When the signing key was made (the key log's first entry). */
  keyCreatedAt: number;
  metrics: Metrics;
  mailer: Mailer;
  /** How busy requests keep this process; background work gives way to them. */
  requestLoad: RequestLoad;
  /** Outbound fetches of user-named URLs; it connects to nothing until asked (net/safe-fetch.ts). */
  safeFetch: SafeFetch;
}

/** What tests may change in how services are built (part of the root's ContextOverrides). */
export interface ServiceOverrides {
  /** How often the IP deny list is reread from the database (default 3 s; tests shorten it). */
  ipBlockRefreshMs?: number;
  /** Presence timings (tests shorten them); defaults in presence-service.ts. */
  presence?: Partial<PresenceTimings>;
  /** The s2s outbox's drain interval (tests shorten it). */
  s2sOutboxIntervalMs?: number;
  /** The command line: not a server (app-database.ts). */
  passive?: boolean;
}

/** What `buildServices` hands on: the services, and what the wiring and the root still need. */
export interface Built {
  services: Services;
  /** The one removal path for messages (services/messages/removal.ts). */
  messageRemover: MessageRemover;
  pages: NewestPages;
  federation: Federation;
}

/**
 * Builds every service once, in dependency order, with no lazy getter, setter or late patch.
 * Nothing here registers a reaction of one area to another (wiring.ts does) or starts
 * background work (context.ts `startBackground`); what must be closed is handed to `closers`.
 */
export async function buildServices(
  infra: Infrastructure,
  overrides: ServiceOverrides,
  closers: Array<() => Promise<void> | void>,
): Promise<Built> {
  const { config, log, clock, db, bus, keys, mailer, requestLoad, safeFetch } = infra;
  // The events port every area publishes through: the outbox, built with the bus.
  const events: EventPort = infra.outbox;
  const sessions = new SessionService(db, clock, config.sessionTtlDays, keys.cookie);
  const audit = new AuditLog(db, clock, log);
  const accounts = new AccountService(
    db,
    config,
    clock,
    sessions,
    audit,
    new AccountViewCache(db, bus, events),
    events,
  );
  const authz = new Authz(db, findMember);
  const workspaces = new WorkspaceService({
    db,
    events,
    config,
    clock,
    log: log.child({ subsystem: 'workspaces' }),
    accounts,
    authz,
  });
  const invites = new InviteService({
    db,
    config,
    clock,
    log: log.child({ subsystem: 'invites' }),
    mailer,
    featureState: (name) => config.features.find((f) => f.key === name)?.state ?? 'enabled',
    workspaces,
    authz,
  });
  const signup = new SignupPolicy(config, clock, keys.cookie, {
    joinAsMember: (tx, workspaceId, accountId) =>
      workspaces.membership.joinAsMember(tx, workspaceId, accountId),
    redeemInviteForSignup: (tx, token, accountId) => invites.redeemForSignup(tx, token, accountId),
  });
  const registration = new RegistrationService(
    db,
    config,
    clock,
    accounts,
    sessions,
    signup,
    mailer,
    log.child({ subsystem: 'registration' }),
    audit,
  );
  const passwordResets = new PasswordResetService(
    db,
    config,
    clock,
    sessions,
    mailer,
    log.child({ subsystem: 'password-reset' }),
  );
  const channels = new ChannelService({
    db,
    events,
    config,
    clock,
    log: log.child({ subsystem: 'channels' }),
    workspaces,
    authz,
  });
  const keyChallenges = new KeyChallenges(db, clock, () => keys.signingPublicRaw);
  const devices = new DeviceService(db, config, clock, sessions, keyChallenges);
  const keyAuth = new KeyAuthService(db, config, clock, sessions, accounts, keyChallenges, signup);
  // The one removal path for messages; areas react to it in wiring.ts (removal.ts).
  // The newest pages are kept only while this is the one server process (the in-process bus);
  // what the command line changes reaches them through the outbox's drainer.
  const pages = new NewestPages(!(bus instanceof RedisBus));
  const messageRemover = new MessageRemover(events, pages);
  // New messages' index rows are held for a write after their sends on SQLite's server
  // process (search/held-terms.ts); the command line writes them with the send.
  const heldTerms = new HeldTerms(
    db,
    clock,
    log.child({ subsystem: 'search' }),
    !overrides.passive,
  );
  closers.push(() => heldTerms.close());
  const search = new SearchService({ db, workspaces, channels, authz, heldTerms });
  const accountDeletion = new AccountDeletionService(
    db,
    config,
    clock,
    sessions,
    events,
    log.child({ subsystem: 'account-deletion' }),
    workspaces.lifecycle,
    messageRemover,
    accounts.views,
  );
  const moderation = new ModerationService({
    db,
    clock,
    config,
    sessions,
    audit,
    authz,
    // A cascading block deletes the workspaces it owns the way a purge does: deletion hooks
    // (files, plugins, ...) run and members get MemberLeft and WorkspaceDeleted.
    removeWorkspace: (tx, id, by) => workspaces.lifecycle.deleteForPurge(tx, id, by),
    messages: messageRemover,
    frankingKey: keys.franking,
  });
  const dm = new DmService({
    db,
    events,
    config,
    clock,
    log: log.child({ subsystem: 'dm' }),
    accounts,
    devices,
  });
  const conversations = new ConversationService({
    db,
    events,
    config,
    clock,
    log: log.child({ subsystem: 'conversations' }),
    dm,
  });
  const files = new FileStorage(config.dataDir, clock);
  const avatars = new Avatars(db, files, accounts.views);
  const emoji = new EmojiService({ db, config, clock, authz, files });
  const dataExports = new DataExportService({
    db,
    blobs: files.blobs,
    dataDir: config.dataDir,
    clock,
    log: log.child({ subsystem: 'data-export' }),
  });
  closers.push(() => dataExports.close());
  const messages = new MessageService({
    db,
    events,
    config,
    clock,
    log: log.child({ subsystem: 'messages' }),
    accounts,
    removal: messageRemover,
    authz,
    emoji,
    pages,
    heldTerms,
  });
  const mls = new MlsService({
    db,
    events,
    config,
    clock,
    log: log.child({ subsystem: 'mls' }),
    devices,
    messages,
    frankingKey: keys.franking,
  });
  const linkPreviews = new LinkPreviewService({
    db,
    clock,
    log: log.child({ subsystem: 'link-previews' }),
    messages,
    fetcher: safeFetch,
    enabled: featureEnabled(config, 'link_previews'),
    concurrency: config.linkPreviewConcurrency,
    load: requestLoad,
  });
  closers.push(() => linkPreviews.close());
  const presence = new PresenceService({
    db,
    bus,
    clock,
    log: log.child({ subsystem: 'presence' }),
    redis: bus instanceof RedisBus ? bus.commands : null,
    redisPrefix: config.redisPrefix,
    timings: overrides.presence,
  });
  closers.push(() => presence.stop());
  const typing = new TypingService(db, bus, clock, presence, authz);
  const ipBlocks = new IpBlockService(db, clock, overrides.ipBlockRefreshMs, audit);

  const attachments = new AttachmentService({
    db,
    config,
    clock,
    log: log.child({ subsystem: 'attachments' }),
    files,
    announce: messages.announce,
  });
  const plugins = new PluginService({
    db,
    events,
    config,
    clock,
    log: log.child({ subsystem: 'plugins' }),
    files,
    authz,
    audit,
  });
  const commands = new CommandSystem({
    db,
    config,
    clock,
    log: log.child({ subsystem: 'commands' }),
    authz,
    audit,
    plugins,
    bus,
    events,
    channels,
    messages,
    workspaces,
    presence,
    moderation,
    ipBlocks,
  });
  // Closing waits for the pipeline triggers in flight.
  closers.push(() => commands.idle());
  const { notifications, webPush, digests } = await buildNotifications({
    config,
    db,
    events,
    clock,
    log,
    authz,
    mailer,
    secret: keys.cookie,
    presence,
    messages,
    requestLoad,
    onClose: (fn) => closers.push(fn),
    soleProcess: !(bus instanceof RedisBus) && !overrides.passive,
  });
  const realtime = new RealtimeService(db, presence, clock);

  const services: Services = {
    authz,
    accounts,
    sessions,
    ipBlocks,
    moderation,
    signup,
    registration,
    passwordResets,
    workspaces,
    invites,
    channels,
    devices,
    keyAuth,
    accountDeletion,
    conversations,
    messages,
    dm,
    presence,
    typing,
    realtime,
    files,
    avatars,
    emoji,
    search,
    attachments,
    plugins,
    linkPreviews,
    commands,
    mls,
    notifications,
    digests,
    webPush,
    dataExports,
  };

  const federation = await buildFederation({
    db,
    clock,
    config,
    log: log.child({ subsystem: 'federation' }),
    keys,
    keyCreatedAt: infra.keyCreatedAt,
    sessions,
    isServerBlocked: (serverId) => moderation.blocks.isServerBlocked(serverId),
    bus,
    events,
    outboxIntervalMs: overrides.s2sOutboxIntervalMs,
  });
  closers.push(() => federation.close());

  return { services, messageRemover, pages, federation };
}
