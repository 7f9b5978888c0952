import { z } from 'zod';

import {
  bool,
  cidrList,
  intWithDefault,
  limitWithDefault,
  oneOf,
  optionalHttpUrl,
  optionalLimit,
  optionalListenAddr,
  optionalString,
  optionalUrlOfScheme,
  stringWithDefault,
} from './env-schema.js';

/** The hard ceiling of message text, whatever SVC_LIMIT_MESSAGE_BYTES says. */
export const MAX_MESSAGE_BYTES = 65536;
/** Plugins a workspace registry holds at most, whatever SVC_LIMIT_PLUGINS_PER_WORKSPACE says. */
export const MAX_PLUGINS_PER_WORKSPACE = 100;

export const DM_REACH = ['anyone', 'shared_workspace', 'contacts'] as const;
export const DM_PARTNERS = ['any_server', 'this_server'] as const;

/**
 * Every SVC_* variable the server reads, with its default. `docs/configuration.md` lists and
 * explains each one (a test checks that none is missing there).
 */
export const variables = {
  // Listeners and storage
  SVC_SERVER_HOST: stringWithDefault('127.0.0.1'),
  SVC_SERVER_PORT: intWithDefault(8080, { min: 0, max: 65535 }),
  SVC_DATA_DIR: stringWithDefault('./data'),
  SVC_DATABASE_URL: optionalUrlOfScheme(
    ['postgres:', 'postgresql:'],
    'a postgres:// or postgresql:// connection URL',
  ),
  SVC_DATABASE_POOL_SIZE: intWithDefault(10, { min: 1, max: 1000 }),
  SVC_REDIS_URL: optionalUrlOfScheme(['redis:', 'rediss:'], 'a redis:// or rediss:// URL'),
  SVC_REDIS_PREFIX: stringWithDefault('svc:'),
  // Time limits of the dependencies (docs/failures.md): together they keep a request that needs
  // a failing dependency under five seconds.
  SVC_DATABASE_CONNECT_TIMEOUT_MS: intWithDefault(1500, { min: 100, max: 60_000 }),
  SVC_DATABASE_STATEMENT_TIMEOUT_MS: intWithDefault(3000, { min: 100, max: 600_000 }),
  SVC_REDIS_TIMEOUT_MS: intWithDefault(2000, { min: 100, max: 60_000 }),
  // How long an event's writer has to publish it before a drainer takes its outbox row over.
  SVC_OUTBOX_GRACE_MS: intWithDefault(10_000, { min: 1000, max: 3_600_000 }),
  SVC_DATA_MIN_FREE_MB: intWithDefault(16, { min: 0, max: 1_000_000 }),
  SVC_METRICS_ADDR: optionalListenAddr(),
  SVC_LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  SVC_ROLE: oneOf(['relay', 'host', 'both'], 'both'),

  // Public address, origins, proxies, cookies
  SVC_PUBLIC_BASE_URL: optionalHttpUrl(),
  SVC_CORS_ALLOWED_ORIGIN: optionalHttpUrl(),
  SVC_TRUST_FORWARDED_HEADERS: bool(false),
  SVC_FORCE_SECURE_COOKIES: bool(false),
  SVC_ENABLE_GRAPHIQL: bool(false),
  SVC_WEB_CLIENT: bool(true),
  SVC_WEB_CLIENT_DIR: optionalString(),

  // Features and mail
  SVC_FEATURES_DISABLED: optionalString(),
  SVC_SMTP_HOST: optionalString(),
  SVC_SMTP_PORT: intWithDefault(587, { min: 1, max: 65535 }),
  SVC_SMTP_SECURE: bool(false),
  SVC_SMTP_USER: optionalString(),
  SVC_SMTP_PASSWORD: optionalString(),
  SVC_SMTP_FROM: optionalString(),
  SVC_MAIL_LOG_BODIES: bool(false),

  // Instance presentation
  SVC_INSTANCE_NOTICE: optionalString(500),
  SVC_INSTANCE_NAME: optionalString(60),
  SVC_TERMS_URL: optionalHttpUrl(),
  SVC_AUDIT_RETENTION_DAYS: optionalLimit(),
  SVC_DEFAULT_WORKSPACE: optionalString(),

  // Registration and sessions
  SVC_OPEN_REGISTRATION: bool(false),
  SVC_REGISTRATION_POW_BITS: intWithDefault(0, { min: 0, max: 32 }),
  SVC_SIGNUP_REQUIRE_KEYS: bool(true),
  SVC_SESSION_TTL_DAYS: intWithDefault(30, { min: 1, max: 3650 }),
  SVC_ACCOUNT_DELETION_GRACE_DAYS: intWithDefault(14, { min: 0, max: 3650 }),
  SVC_PROBATION_HOURS: optionalLimit(),

  // Direct-message floors
  SVC_DM_INBOUND: oneOf(DM_REACH, 'anyone'),
  SVC_DM_OUTBOUND: oneOf(DM_REACH, 'anyone'),
  SVC_DM_PARTNERS: oneOf(DM_PARTNERS, 'any_server'),

  // Request limits
  SVC_API_MAX_BATCH: intWithDefault(20, { min: 1, max: 1000 }),
  SVC_RATE_REQUESTS_PER_MIN_PER_IP: optionalLimit(),
  SVC_RATE_EXEMPT_ADDRESSES: cidrList(),
  SVC_RATE_MUTATIONS_PER_MIN_PER_SESSION: optionalLimit(),
  SVC_RATE_LOGIN_FAILURES_PER_DAY_PER_ACCOUNT: optionalLimit(),
  SVC_RATE_MESSAGES_PER_MIN_PER_USER: optionalLimit(),
  SVC_RATE_MESSAGES_BURST: optionalLimit(),
  SVC_RATE_PROBATION_MESSAGES_PER_MIN: optionalLimit(),
  SVC_RATE_WS_CONNECTIONS_PER_USER: optionalLimit(),
  SVC_RATE_SUBSCRIPTIONS_PER_CONNECTION: optionalLimit(),
  SVC_S2S_PEER_RATE_PER_MIN: optionalLimit(),
  // Federation (docs/federation.md): a peer's whole answer, and development-only plain http.
  SVC_S2S_TIMEOUT_MS: intWithDefault(10_000, { min: 100, max: 120_000 }),
  SVC_S2S_INSECURE: bool(false),
  SVC_WS_SESSION_RECHECK_SECS: intWithDefault(30, { min: 0, max: 86400 }),
  SVC_WS_WRITE_GATHER_MS: intWithDefault(100, { min: 0, max: 1000 }),

  // Instance caps
  SVC_LIMIT_WORKSPACES_PER_USER: optionalLimit(),
  SVC_LIMIT_MEMBERS_PER_WORKSPACE: optionalLimit(),
  SVC_LIMIT_CHANNELS_PER_WORKSPACE: optionalLimit(),
  SVC_LIMIT_DEVICES_PER_USER: optionalLimit(),
  SVC_LIMIT_DM_REQUESTS_PER_DAY: optionalLimit(),
  SVC_LIMIT_MACROS_PER_WORKSPACE: optionalLimit(),
  SVC_LIMIT_PIPELINES_PER_WORKSPACE: optionalLimit(),
  SVC_LIMIT_PLUGINS_PER_WORKSPACE: optionalLimit(MAX_PLUGINS_PER_WORKSPACE),
  SVC_LIMIT_INVITES_PER_USER_PER_DAY: optionalLimit(),
  SVC_LIMIT_INVITE_MAX_USES: optionalLimit(),
  SVC_LIMIT_MESSAGE_BYTES: optionalLimit(MAX_MESSAGE_BYTES),
  SVC_LIMIT_PENDING_INVITES_PER_USER: limitWithDefault(50),
  SVC_RELAY_DEVICES_PER_USER: limitWithDefault(32),
  SVC_RELAY_DM_REQUESTS_PER_DAY: limitWithDefault(20),

  // Link previews
  SVC_LINK_PREVIEW_CONCURRENCY: intWithDefault(8, { min: 1, max: 64 }),

  // Notifications (docs/notifications.md)
  SVC_NOTIFY_DIGEST_AWAY_MINUTES: intWithDefault(60, { min: 1, max: 10080 }),
  SVC_NOTIFY_DIGEST_INTERVAL_MINUTES: intWithDefault(60, { min: 1, max: 10080 }),
  SVC_PUSH_CONTACT: optionalUrlOfScheme(['mailto:', 'https:'], 'a mailto: or https: URL'),
  SVC_PUSH_ALLOW_PRIVATE_ENDPOINTS: bool(false),
};

export const envSchema = z.object(variables);
export type ParsedEnv = z.infer<typeof envSchema>;
export type VariableName = keyof typeof variables;
