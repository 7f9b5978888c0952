import path from 'node:path';

import { ConfigError } from './config-error.js';

import {
  FEATURE_NAMES,
  parseDisabledFeatures,
  resolveFeatureStates,
  type FeatureName,
  type FeatureState,
} from './features.js';
import { envSchema, MAX_MESSAGE_BYTES, variables, type ParsedEnv } from './variables.js';

export { FEATURE_NAMES, type FeatureName, type FeatureState } from './features.js';

export { ConfigError } from './config-error.js';

export type DmReach = ParsedEnv['SVC_DM_INBOUND'];
export type DmPartners = ParsedEnv['SVC_DM_PARTNERS'];

export interface Limits {
  workspacesPerUser: number | null;
  membersPerWorkspace: number | null;
  channelsPerWorkspace: number | null;
  /** The stricter of SVC_LIMIT_DEVICES_PER_USER and the relay quota; never null. */
  devicesPerUser: number;
  /** The stricter of SVC_LIMIT_DM_REQUESTS_PER_DAY and the relay quota; never null. */
  dmRequestsPerDay: number;
  macrosPerWorkspace: number | null;
  pipelinesPerWorkspace: number | null;
  pluginsPerWorkspace: number | null;
  invitesPerUserPerDay: number | null;
  inviteMaxUses: number | null;
  messageBytes: number | null;
  pendingInvitesPerUser: number | null;
  probationHours: number | null;
}

export interface Config {
  server: {
    host: string;
    port: number;
    publicBaseUrl: string | null;
    role: 'relay' | 'host' | 'both';
  };
  /** Server-to-server calls (docs/federation.md). */
  federation: {
    /** A peer's whole answer, connect to last byte (SVC_S2S_TIMEOUT_MS). */
    timeoutMs: number;
    /** Development only: peers over http:// and at private addresses (SVC_S2S_INSECURE). */
    insecure: boolean;
  };
  dataDir: string;
  /** The connection URL is a secret (config/secrets.ts). */
  database: {
    poolSize: number;
    /** Connecting to PostgreSQL and waiting for a free pooled connection. */
    connectTimeoutMs: number;
    /** One PostgreSQL statement; SQLite's wait for another process's write lock. */
    statementTimeoutMs: number;
  };
  /** `/readyz` fails while the data directory's file system has less free space than this. */
  dataMinFreeBytes: number;
  /** Connecting to Redis and each Redis command. */
  redisTimeoutMs: number;
  /** Prefix of every Redis channel and key (SVC_REDIS_PREFIX). */
  redisPrefix: string;
  /** How old an outbox row must be before a drainer takes it over (SVC_OUTBOX_GRACE_MS). */
  outboxGraceMs: number;
  metricsAddr: { host: string; port: number } | null;
  logLevel: ParsedEnv['SVC_LOG_LEVEL'];
  http: {
    corsAllowedOrigin: string | null;
    trustForwardedHeaders: boolean;
    forceSecureCookies: boolean;
    enableGraphiql: boolean;
    /**
     * The web client at `/` (SVC_WEB_CLIENT): null when off; otherwise the folder of its built
     * files (SVC_WEB_CLIENT_DIR), or null for the one this build made (`dist/web`), and the
     * name the installed app goes by (SVC_INSTANCE_NAME, else `svc`).
     */
    webClient: { dir: string | null; instanceName: string } | null;
  };
  features: readonly FeatureState[];
  disabledFeatures: readonly FeatureName[];
  /** SVC_MAIL_LOG_BODIES: mail logged without SMTP shows its text (development only). */
  mailLogBodies: boolean;
  smtp: {
    host: string | null;
    port: number;
    secure: boolean;
    user: string | null;
    from: string | null;
  };
  instance: {
    notice: string | null;
    termsUrl: string | null;
    auditRetentionDays: number | null;
    defaultWorkspace: string | null;
  };
  registration: { open: boolean; powBits: number; signupRequiresKeys: boolean };
  sessionTtlDays: number;
  accountDeletionGraceDays: number;
  dm: { inbound: DmReach; outbound: DmReach; partners: DmPartners };
  rates: {
    apiMaxBatch: number;
    requestsPerMinPerIp: number | null;
    exemptAddresses: readonly string[];
    mutationsPerMinPerSession: number | null;
    /** Failed password checks one account may take in 24 hours (docs/security.md). */
    loginFailuresPerDayPerAccount: number | null;
    messagesPerMinPerUser: number | null;
    messagesBurst: number | null;
    probationMessagesPerMin: number | null;
    wsConnectionsPerUser: number | null;
    subscriptionsPerConnection: number | null;
    s2sPeerPerMin: number | null;
    wsSessionRecheckSecs: number;
    /** The longest a WebSocket frame waits for others to the same client on a busy process. */
    wsWriteGatherMs: number;
  };
  limits: Limits;
  /**
   * Which bound sets `limits.dmRequestsPerDay`: the instance cap (one more answers VALIDATION)
   * or the relay quota (RATE_LIMITED). A tie goes to the cap, the operator's explicit choice.
   */
  dmRequestsBoundBy: 'cap' | 'quota';
  /** The hard ceiling on message text: SVC_LIMIT_MESSAGE_BYTES or 65536. */
  messageBytesMax: number;
  linkPreviewConcurrency: number;
  /** Notification digests and Web Push (docs/notifications.md). */
  notifications: {
    digestAwayMinutes: number;
    digestIntervalMinutes: number;
    pushContact: string | null;
    pushAllowPrivateEndpoints: boolean;
  };
}

const stricter = (cap: number | null, quota: number | null): number =>
  Math.min(cap ?? Number.POSITIVE_INFINITY, quota ?? Number.POSITIVE_INFINITY);

/**
 * Reads every SVC_* variable once, validates them together and returns a frozen config. Every
 * problem is reported at once, each naming its variable and what it accepts.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(`${issue.path.join('.')}: ${issue.message}`);
    }
  }
  const features = parseDisabledFeatures(env.SVC_FEATURES_DISABLED);
  for (const name of features.unknown) {
    problems.push(
      `SVC_FEATURES_DISABLED: unknown feature "${name}"; known features are ${FEATURE_NAMES.join(', ')}`,
    );
  }
  if (!parsed.success || problems.length > 0) throw new ConfigError(problems);
  const e = parsed.data;

  const devicesPerUser = stricter(e.SVC_LIMIT_DEVICES_PER_USER, e.SVC_RELAY_DEVICES_PER_USER);
  const dmRequestsPerDay = stricter(
    e.SVC_LIMIT_DM_REQUESTS_PER_DAY,
    e.SVC_RELAY_DM_REQUESTS_PER_DAY,
  );
  // A relay quota of 0 turns the quota off; with the cap also off nothing bounds it, which the
  // contract rules out ("never null"), so fall back to the documented quota defaults.
  const config: Config = {
    server: {
      host: e.SVC_SERVER_HOST,
      port: e.SVC_SERVER_PORT,
      publicBaseUrl: e.SVC_PUBLIC_BASE_URL,
      role: e.SVC_ROLE,
    },
    federation: { timeoutMs: e.SVC_S2S_TIMEOUT_MS, insecure: e.SVC_S2S_INSECURE },
    dataDir: path.resolve(e.SVC_DATA_DIR),
    database: {
      poolSize: e.SVC_DATABASE_POOL_SIZE,
      connectTimeoutMs: e.SVC_DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: e.SVC_DATABASE_STATEMENT_TIMEOUT_MS,
    },
    dataMinFreeBytes: e.SVC_DATA_MIN_FREE_MB * 1024 * 1024,
    redisTimeoutMs: e.SVC_REDIS_TIMEOUT_MS,
    redisPrefix: e.SVC_REDIS_PREFIX,
    outboxGraceMs: e.SVC_OUTBOX_GRACE_MS,
    metricsAddr: e.SVC_METRICS_ADDR,
    logLevel: e.SVC_LOG_LEVEL,
    http: {
      corsAllowedOrigin: e.SVC_CORS_ALLOWED_ORIGIN,
      trustForwardedHeaders: e.SVC_TRUST_FORWARDED_HEADERS,
      forceSecureCookies: e.SVC_FORCE_SECURE_COOKIES,
      enableGraphiql: e.SVC_ENABLE_GRAPHIQL,
      webClient: e.SVC_WEB_CLIENT
        ? {
            dir: e.SVC_WEB_CLIENT_DIR ? path.resolve(e.SVC_WEB_CLIENT_DIR) : null,
            instanceName: e.SVC_INSTANCE_NAME ?? 'svc',
          }
        : null,
    },
    features: resolveFeatureStates(features.disabled, {
      host: e.SVC_SMTP_HOST,
      from: e.SVC_SMTP_FROM,
    }),
    disabledFeatures: features.disabled,
    mailLogBodies: e.SVC_MAIL_LOG_BODIES,
    smtp: {
      host: e.SVC_SMTP_HOST,
      port: e.SVC_SMTP_PORT,
      secure: e.SVC_SMTP_SECURE,
      user: e.SVC_SMTP_USER,
      from: e.SVC_SMTP_FROM,
    },
    instance: {
      notice: e.SVC_INSTANCE_NOTICE,
      termsUrl: e.SVC_TERMS_URL,
      auditRetentionDays: e.SVC_AUDIT_RETENTION_DAYS,
      defaultWorkspace: e.SVC_DEFAULT_WORKSPACE,
    },
    registration: {
      open: e.SVC_OPEN_REGISTRATION,
      powBits: e.SVC_REGISTRATION_POW_BITS,
      signupRequiresKeys: e.SVC_SIGNUP_REQUIRE_KEYS,
    },
    sessionTtlDays: e.SVC_SESSION_TTL_DAYS,
    accountDeletionGraceDays: e.SVC_ACCOUNT_DELETION_GRACE_DAYS,
    dm: { inbound: e.SVC_DM_INBOUND, outbound: e.SVC_DM_OUTBOUND, partners: e.SVC_DM_PARTNERS },
    rates: {
      apiMaxBatch: e.SVC_API_MAX_BATCH,
      requestsPerMinPerIp: e.SVC_RATE_REQUESTS_PER_MIN_PER_IP,
      exemptAddresses: e.SVC_RATE_EXEMPT_ADDRESSES,
      mutationsPerMinPerSession: e.SVC_RATE_MUTATIONS_PER_MIN_PER_SESSION,
      loginFailuresPerDayPerAccount: e.SVC_RATE_LOGIN_FAILURES_PER_DAY_PER_ACCOUNT,
      messagesPerMinPerUser: e.SVC_RATE_MESSAGES_PER_MIN_PER_USER,
      messagesBurst: e.SVC_RATE_MESSAGES_BURST ?? e.SVC_RATE_MESSAGES_PER_MIN_PER_USER,
      probationMessagesPerMin: e.SVC_RATE_PROBATION_MESSAGES_PER_MIN,
      wsConnectionsPerUser: e.SVC_RATE_WS_CONNECTIONS_PER_USER,
      subscriptionsPerConnection: e.SVC_RATE_SUBSCRIPTIONS_PER_CONNECTION,
      s2sPeerPerMin: e.SVC_S2S_PEER_RATE_PER_MIN,
      wsSessionRecheckSecs: e.SVC_WS_SESSION_RECHECK_SECS,
      wsWriteGatherMs: e.SVC_WS_WRITE_GATHER_MS,
    },
    limits: {
      workspacesPerUser: e.SVC_LIMIT_WORKSPACES_PER_USER,
      membersPerWorkspace: e.SVC_LIMIT_MEMBERS_PER_WORKSPACE,
      channelsPerWorkspace: e.SVC_LIMIT_CHANNELS_PER_WORKSPACE,
      devicesPerUser: Number.isFinite(devicesPerUser) ? devicesPerUser : 32,
      dmRequestsPerDay: Number.isFinite(dmRequestsPerDay) ? dmRequestsPerDay : 20,
      macrosPerWorkspace: e.SVC_LIMIT_MACROS_PER_WORKSPACE,
      pipelinesPerWorkspace: e.SVC_LIMIT_PIPELINES_PER_WORKSPACE,
      pluginsPerWorkspace: e.SVC_LIMIT_PLUGINS_PER_WORKSPACE,
      invitesPerUserPerDay: e.SVC_LIMIT_INVITES_PER_USER_PER_DAY,
      inviteMaxUses: e.SVC_LIMIT_INVITE_MAX_USES,
      messageBytes: e.SVC_LIMIT_MESSAGE_BYTES,
      pendingInvitesPerUser: e.SVC_LIMIT_PENDING_INVITES_PER_USER,
      probationHours: e.SVC_PROBATION_HOURS,
    },
    dmRequestsBoundBy:
      e.SVC_LIMIT_DM_REQUESTS_PER_DAY !== null &&
      e.SVC_LIMIT_DM_REQUESTS_PER_DAY <= dmRequestsPerDay
        ? 'cap'
        : 'quota',
    messageBytesMax: e.SVC_LIMIT_MESSAGE_BYTES ?? MAX_MESSAGE_BYTES,
    linkPreviewConcurrency: e.SVC_LINK_PREVIEW_CONCURRENCY,
    notifications: {
      digestAwayMinutes: e.SVC_NOTIFY_DIGEST_AWAY_MINUTES,
      digestIntervalMinutes: e.SVC_NOTIFY_DIGEST_INTERVAL_MINUTES,
      pushContact: e.SVC_PUSH_CONTACT,
      pushAllowPrivateEndpoints: e.SVC_PUSH_ALLOW_PRIVATE_ENDPOINTS,
    },
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * `SVC_*` names set in `env` that the server does not read (a misspelt variable is otherwise
 * silently ignored); `SVC_TEST_*` belong to the test suite.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env)
    .filter((k) => k.startsWith('SVC_') && !k.startsWith('SVC_TEST_') && !(k in variables))
    .sort();
}

/** Whether a feature is enabled (neither disabled nor unavailable). */
export function featureEnabled(config: Config, name: FeatureName): boolean {
  return config.features.find((f) => f.key === name)?.state === 'enabled';
}
