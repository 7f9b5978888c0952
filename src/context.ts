import type { Logger } from 'pino';

import { featureEnabled, type Config } from './config/index.js';
import type { Secrets } from './config/secrets.js';
import { openAppDatabase, type AppDatabaseOptions } from './app-database.js';
import type { Db } from './db/database.js';
import { assertMigrated } from './db/migrate.js';
import type { EventBus } from './events/bus.js';
import type { Outbox } from './events/outbox.js';
import { openEvents } from './events/wiring.js';
import { RedisBus } from './events/redis-bus.js';
import { allJobs } from './jobs/index.js';
import { Scheduler } from './jobs/scheduler.js';
import { systemClock, type Clock } from './lib/clock.js';
import { TokenBucketLimiter } from './lib/token-bucket.js';
import { RequestLoad } from './lib/request-load.js';
import { Admission } from './http/admission.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { AccountService } from './services/accounts/account-service.js';
import { Avatars } from './services/accounts/avatars.js';
import { AccountViewCache } from './services/accounts/view-cache.js';
import { NewestPages } from './services/messages/newest-pages.js';
import { Authz } from './services/authz/authz.js';
import { loadOrCreateServerKeys, type ServerKeys } from './services/instance/server-keys.js';
import { IpBlockService } from './services/ip-blocks/ip-block-service.js';
import { AuditLog } from './services/moderation/audit-log.js';
import { ModerationService } from './services/moderation/moderation-service.js';
import { SessionService } from './services/sessions/session-service.js';
import { AccountDeletionService } from './services/account-deletion/account-deletion-service.js';
import { DeviceService } from './services/devices/device-service.js';
import { KeyAuthService } from './services/devices/key-auth-service.js';
import { KeyChallenges } from './services/devices/key-challenges.js';
import { createMailer, type Mailer } from './mail/mailer.js';
import { PasswordResetService } from './services/accounts/password-reset.js';
import { RegistrationService } from './services/registration/registration-service.js';
import { SignupPolicy } from './services/registration/signup-policy.js';
import { ChannelService } from './services/channels/channel-service.js';
import { InviteService } from './services/workspaces/invite-service.js';
import { WorkspaceService } from './services/workspaces/workspace-service.js';
import { ConversationService } from './services/conversations/conversation-service.js';
import { DmService } from './services/dm/dm-service.js';
import { MessageService } from './services/messages/message-service.js';
import { MessageRemover } from './services/messages/removal.js';
import { SearchService } from './services/search/search-service.js';
import { PresenceService, type PresenceTimings } from './services/presence/presence-service.js';
import { TypingService } from './services/presence/typing-service.js';
import { RealtimeService } from './services/realtime/realtime-service.js';
import { FileStorage } from './services/files/file-storage.js';
import { AttachmentService } from './services/attachments/attachment-service.js';
import { MlsService } from './services/mls/mls-service.js';
import { EmojiService } from './services/emoji/emoji-service.js';
import { PluginService } from './services/plugins/plugin-service.js';
import { LinkPreviewService } from './services/link-previews/link-preview-service.js';
import { CommandSystem } from './services/commands/command-system.js';
import { SafeFetch, type SafeFetchOptions } from './net/safe-fetch.js';
import { buildNotifications } from './services/notifications/wiring.js';
import { readVersion } from './version.js';
import type { Services } from './services/index.js';
import { attachFederation, buildFederation, type Federation } from './federation/index.js';

/** Everything long-lived, created in one place and closed in reverse order. */
export interface AppContext {
  version: string;
  config: Config;
  log: Logger;
  clock: Clock;
  db: Db;
  bus: EventBus;
  /** Where every transactional event is written, and the drainer of rows others left. */
  outbox: Outbox;
  keys: ServerKeys;
  keyCreatedAt: number;
  metrics: Metrics;
  /** How busy requests keep this process; background work gives way to them. */
  requestLoad: RequestLoad;
  mailer: Mailer;
  services: Services;
  /** Periodic jobs; started by the server, idle in the CLI (which runs jobs on demand). */
  scheduler: Scheduler;
  /** Per-process request limits (contract: Request limits), or null where off. */
  limiters: {
    /** SVC_RATE_REQUESTS_PER_MIN_PER_IP, counted by admission. */
    addresses: TokenBucketLimiter | null;
    /** SVC_RATE_MUTATIONS_PER_MIN_PER_SESSION, counted by the GraphQL route. */
    mutations: TokenBucketLimiter | null;
  };
  /** The one admission path of HTTP requests and WebSocket upgrades. */
  admission: Admission;
  /** Relay and host roles, the key log, peers and signed calls (docs/federation.md). */
  federation: Federation;
  featureEnabled(name: Parameters<typeof featureEnabled>[1]): boolean;
  close(): Promise<void>;
}

export interface ContextOverrides extends AppDatabaseOptions {
  clock?: Clock;
  log?: Logger;
  /** Do not start the periodic jobs (tests run them with scheduler.runOnce). */
  noJobs?: boolean;
  /** Mail transport (tests capture mail); default from SVC_SMTP_*. */
  mailer?: Mailer;
  /** How often the IP deny list is reread from the database (default 3 s; tests shorten it). */
  ipBlockRefreshMs?: number;
  /** Presence timings (tests shorten them); defaults in presence-service.ts. */
  presence?: Partial<PresenceTimings>;
  /** The outbox's drain interval, grace period and removal delay (tests); see events/outbox.ts. */
  outbox?: {
    drainIntervalMs?: number;
    graceMs?: number;
    keepRows?: boolean;
    removalDelayMs?: number;
  };
  /** Link-preview fetcher options (tests); the defaults are the contract's limits. */
  safeFetch?: SafeFetchOptions;
  /** The s2s outbox's drain interval (tests shorten it). */
  s2sOutboxIntervalMs?: number;
}

/**
 * Opens the database, loads the keys and builds every long-lived object in dependency order.
 * It does not migrate: `svc serve` and `svc migrate` do (main.ts), and a database with pending
 * migrations is refused here (PendingMigrationsError) so no command runs on an old schema.
 */
export async function createAppContext(
  config: Config,
  secrets: Secrets,
  overrides: ContextOverrides = {},
): Promise<AppContext> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  const db = openAppDatabase(config, secrets, log, overrides);
  const closers: Array<() => Promise<void> | void> = [() => db.close()];
  const close = async () => {
    for (const fn of closers.reverse()) {
      try {
        await fn();
      } catch (err) {
        log.error({ err }, 'error while closing');
      }
    }
  };
  try {
    await assertMigrated(db);
    const keys = await loadOrCreateServerKeys(db, clock);
    if (!keys)
      throw new Error('the server keys are missing from the database; restore them from a backup');
    const keyRow = await db.kysely
      .selectFrom('server_key')
      .select('createdAt')
      .where('kind', '=', 'signing')
      .executeTakeFirstOrThrow();

    const { bus, outbox } = await openEvents({
      db,
      log,
      redisUrl: secrets.redisUrl,
      config,
      passive: Boolean(overrides.passive),
      outbox: overrides.outbox,
      onClose: (fn) => closers.push(fn),
    });
    const metrics = new Metrics(db);
    closers.push(() => metrics.close());

    const sessions = new SessionService(db, clock, config.sessionTtlDays, keys.cookie);
    const audit = new AuditLog(db, clock, log);
    const accounts = new AccountService(
      db,
      config,
      clock,
      sessions,
      audit,
      new AccountViewCache(db, bus),
      bus,
    );
    const mailer =
      overrides.mailer ??
      createMailer(config, secrets.smtpPassword, log.child({ subsystem: 'mail' }));
    closers.push(() => mailer.close());
    const authz = new Authz(db);
    const workspaces = new WorkspaceService({
      db,
      bus,
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
        workspaces.joinAsMember(tx, workspaceId, accountId),
      redeemInviteForSignup: (tx, token, accountId) =>
        invites.redeemForSignup(tx, token, accountId),
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
      bus,
      config,
      clock,
      log: log.child({ subsystem: 'channels' }),
      workspaces,
      authz,
    });
    const keyChallenges = new KeyChallenges(db, clock, () => keys.signingPublicRaw);
    const devices = new DeviceService(db, config, clock, sessions, keyChallenges);
    const keyAuth = new KeyAuthService(
      db,
      config,
      clock,
      sessions,
      accounts,
      keyChallenges,
      signup,
    );
    // The one removal path for messages; areas register their clean-up on it (removal.ts).
    // The newest pages are kept only while this is the one server process (the in-process bus);
    // what the command line changes reaches them through the outbox's drainer.
    const pages = new NewestPages(!(bus instanceof RedisBus));
    outbox.onDrained(() => pages.forgetAll());
    const messageRemover = new MessageRemover(bus, pages);
    const search = new SearchService({ db, workspaces, channels, authz });
    messageRemover.onRemove((tx, removal) =>
      search.onMessagesRemoved(
        tx,
        removal.messages.map((m) => m.id),
      ),
    );
    const accountDeletion = new AccountDeletionService(
      db,
      config,
      clock,
      sessions,
      bus,
      log.child({ subsystem: 'account-deletion' }),
      workspaces,
      messageRemover,
      accounts.views,
    );
    const moderation = new ModerationService({
      db,
      clock,
      config,
      bus,
      sessions,
      audit,
      authz,
      // A cascading block deletes the workspaces it owns the way a purge does: deletion hooks
      // (files, plugins, ...) run and members get MemberLeft and WorkspaceDeleted.
      removeWorkspace: (tx, id, by) => workspaces.deleteForPurge(tx, id, by),
      messages: messageRemover,
      frankingKey: keys.franking,
    });
    const dm = new DmService({
      db,
      bus,
      config,
      clock,
      log: log.child({ subsystem: 'dm' }),
      accounts,
      devices,
    });
    const conversations = new ConversationService({
      db,
      bus,
      config,
      clock,
      log: log.child({ subsystem: 'conversations' }),
      dm,
    });
    const files = new FileStorage(config.dataDir, clock);
    const avatars = new Avatars(db, files, accounts.views);
    const emoji = new EmojiService({ db, config, clock, authz, files, workspaces });
    const messages = new MessageService({
      db,
      bus,
      config,
      clock,
      log: log.child({ subsystem: 'messages' }),
      accounts,
      removal: messageRemover,
      authz,
      emoji,
      pages,
    });
    const mls = new MlsService({
      db,
      bus,
      config,
      clock,
      log: log.child({ subsystem: 'mls' }),
      devices,
      messages,
      frankingKey: keys.franking,
    });
    // Outbound fetches of user-named URLs; it connects to nothing until asked (net/safe-fetch.ts).
    const requestLoad = new RequestLoad();
    const safeFetch = new SafeFetch(overrides.safeFetch);
    closers.push(() => safeFetch.close());
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
    messageRemover.onRemove(linkPreviews.onRemove);
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
    // The idle sweep and the Redis heartbeat run in the server, not in a CLI command.
    if (!overrides.passive) presence.start();
    const typing = new TypingService(db, bus, clock, presence, authz);
    const ipBlocks = new IpBlockService(db, clock, overrides.ipBlockRefreshMs, audit);
    if (!overrides.passive) {
      await ipBlocks.start();
      closers.push(() => ipBlocks.stop());
    } else {
      await ipBlocks.refresh();
    }

    const attachments = new AttachmentService({
      db,
      config,
      clock,
      log: log.child({ subsystem: 'attachments' }),
      files,
      announce: messages.announce,
    });
    // Attachment rows go with their message, workspace or uploader, in the same transaction;
    // their blobs go with the next blob sweep once no row names them.
    messageRemover.onRemove((tx, removal) => attachments.onMessagesRemoved(tx, removal));
    workspaces.onDelete((tx, id) => attachments.onWorkspaceDeleted(tx, id));
    accountDeletion.addPurgeStep('attachments', (tx, id) => attachments.onAccountPurged(tx, id));
    files.addReferenceSource('attachments', (names) => attachments.referencedBlobs(names));
    const plugins = new PluginService({
      db,
      bus,
      config,
      clock,
      log: log.child({ subsystem: 'plugins' }),
      files,
      authz,
      audit,
    });
    // A workspace's registry and bundle rows go with it; the blobs with the next sweep.
    workspaces.onDelete((tx, id) => plugins.onWorkspaceDeleted(tx, id));
    files.addReferenceSource('plugin-bundles', (names) => plugins.referencedBlobs(names));
    const commands = new CommandSystem({
      db,
      config,
      clock,
      log: log.child({ subsystem: 'commands' }),
      authz,
      audit,
      plugins,
      bus,
      channels,
      messages,
      workspaces,
      presence,
      moderation,
      ipBlocks,
    });
    commands.attach({ accountDeletion, onClose: (fn) => closers.push(fn) });
    const { notifications, webPush, digests } = await buildNotifications({
      config,
      db,
      bus,
      clock,
      log,
      authz,
      mailer,
      secret: keys.cookie,
      presence,
      messages,
      workspaces,
      accountDeletion,
      requestLoad,
      onClose: (fn) => closers.push(fn),
    });
    const realtime = new RealtimeService(db, presence, clock);
    const limiters = {
      addresses: perMinuteLimiter(config.rates.requestsPerMinPerIp),
      mutations: perMinuteLimiter(config.rates.mutationsPerMinPerSession),
    };
    const admission = new Admission(config, ipBlocks, limiters.addresses);

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
    };
    const federation = await buildFederation({
      db,
      clock,
      config,
      log: log.child({ subsystem: 'federation' }),
      keys,
      keyCreatedAt: keyRow.createdAt,
      sessions,
      isServerBlocked: (serverId) => moderation.blocks.isServerBlocked(serverId),
      bus,
      outboxIntervalMs: overrides.s2sOutboxIntervalMs,
    });
    closers.push(() => federation.close());
    if (!overrides.passive) federation.start();
    attachFederation(federation, { accountDeletion, blocks: moderation.blocks, devices });

    const scheduler = new Scheduler(
      db,
      log.child({ subsystem: 'jobs' }),
      allJobs({ services, clock }),
    );
    closers.push(() => scheduler.stop());
    if (!overrides.passive && !overrides.noJobs) scheduler.start();

    return {
      version: readVersion(),
      config,
      log,
      clock,
      db,
      bus,
      outbox,
      keys,
      keyCreatedAt: keyRow.createdAt,
      metrics,
      requestLoad,
      mailer,
      services,
      limiters,
      admission,
      federation,
      scheduler,
      featureEnabled: (name) => featureEnabled(config, name),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A per-minute bucket with a burst of the same size, or null when the limit is off. */
function perMinuteLimiter(perMinute: number | null): TokenBucketLimiter | null {
  return perMinute === null ? null : new TokenBucketLimiter({ perMinute, burst: perMinute });
}
