import type { Logger } from 'pino';

import type { Config } from '../config/index.js';
import type { Db } from '../db/database.js';
import type { Tx } from '../db/transaction.js';
import type { Clock } from '../lib/clock.js';
import { TokenBucketLimiter } from '../lib/token-bucket.js';
import type { ServerKeys } from '../services/instance/index.js';
import type { SessionService } from '../services/sessions/index.js';

import type { EventBus } from '../events/bus.js';
import type { EventPort } from '../events/port.js';

import { EventBridge } from './event-bridge.js';
import { EventDelivery } from './event-delivery.js';
import { FederationService } from './federation-service.js';
import { ServerKeyLog } from './key-log.js';
import { PeerDirectory, PeerKeyError } from './peers.js';
import { reachableRemotePeople } from './queries.js';
import { Revocations } from './revocations.js';
import { S2sClient } from './s2s-client.js';
import { S2sOutbox } from './s2s-outbox.js';
import { S2sVerifier } from './s2s-verifier.js';

/** Federation's long-lived objects, built once by the composition root. */
export interface Federation {
  /** This server's id (host[:port] of SVC_PUBLIC_BASE_URL), or null: federation is off. */
  selfId: string | null;
  keyLog: ServerKeyLog;
  /** Null while federation is off. */
  client: S2sClient | null;
  peers: PeerDirectory | null;
  verifier: S2sVerifier;
  service: FederationService;
  /** Host side of relayStream for people from other servers; null while federation is off. */
  bridge: EventBridge | null;
  /** The stored events for people from other servers and their delivery; null while off. */
  events: EventDelivery | null;
  revocations: Revocations;
  outbox: S2sOutbox | null;
  start(): void;
  close(): Promise<void>;
}

/** The server id a base URL gives: its host and port, lower-case. */
export function serverIdOf(baseUrl: string): string {
  return new URL(baseUrl).host.toLowerCase();
}

export async function buildFederation(deps: {
  db: Db;
  clock: Clock;
  config: Config;
  log: Logger;
  keys: ServerKeys;
  keyCreatedAt: number;
  sessions: SessionService;
  isServerBlocked: (serverId: string) => Promise<boolean>;
  bus: EventBus;
  /** Where relayed events are written for this server's subscribers (the event outbox). */
  events: EventPort;
  outboxIntervalMs?: number;
}): Promise<Federation> {
  const { db, clock, config, log, keys } = deps;
  const keyLog = new ServerKeyLog(db, clock, keys, deps.keyCreatedAt);
  await keyLog.ensure();
  const base = config.server.publicBaseUrl;
  const selfId = base ? serverIdOf(base) : null;
  const client = selfId
    ? new S2sClient({
        selfId,
        keys,
        clock,
        timeoutMs: config.federation.timeoutMs,
        insecure: config.federation.insecure,
      })
    : null;
  const peers = client ? new PeerDirectory({ db, clock, client, log }) : null;
  const perMin = config.rates.s2sPeerPerMin;
  const verifier = new S2sVerifier({
    db,
    clock,
    log,
    peers: peers ?? unreachablePeers(),
    origin: base ? new URL(base).origin : 'http://localhost',
    limiter: perMin === null ? null : new TokenBucketLimiter({ perMinute: perMin, burst: perMin }),
    isServerBlocked: deps.isServerBlocked,
  });
  const events = client
    ? new EventDelivery({
        db,
        clock,
        client,
        log: log.child({ part: 'event-delivery' }),
        // Longer than any call may take, so a lease ends only with a process that stopped.
        leaseMs: config.federation.timeoutMs + 30_000,
        intervalMs: deps.outboxIntervalMs,
      })
    : null;
  const bridge = events
    ? new EventBridge({
        db,
        bus: deps.bus,
        delivery: events,
        log: log.child({ part: 'event-bridge' }),
        clock,
      })
    : null;
  if (events && bridge) events.onUnreachable = (accountId) => bridge.closeStreams(accountId);
  const service = new FederationService({
    events: deps.events,
    bridge,
    db,
    clock,
    log,
    config,
    keys,
    keyLog,
    selfId,
    client,
    peers,
    sessions: deps.sessions,
    isServerBlocked: deps.isServerBlocked,
  });
  const revocations = new Revocations({
    db,
    clock,
    log,
    config,
    keys,
    selfId,
    client,
    peers,
    sessions: deps.sessions,
    isServerBlocked: deps.isServerBlocked,
    forgetPerson: (accountId, events) => service.forgetPerson(accountId, events),
  });
  let keyTimer: NodeJS.Timeout | undefined;
  const outbox = client
    ? new S2sOutbox({ db, clock, log, client, intervalMs: deps.outboxIntervalMs })
    : null;
  return {
    selfId,
    keyLog,
    client,
    peers,
    verifier,
    service,
    bridge,
    events,
    revocations,
    outbox,
    start: () => {
      // A rotation made by another process (`svc server-key rotate`) is taken up here too.
      keyTimer ??= setInterval(() => {
        keyLog.refresh().catch((err: unknown) => log.warn({ err }, 'key log refresh failed'));
      }, ServerKeyLog.REFRESH_MS);
      keyTimer.unref();
      outbox?.start();
      events?.start();
      if (bridge) void reopenBridges(db, bridge, log);
    },
    close: async () => {
      if (keyTimer) clearInterval(keyTimer);
      bridge?.closeAll();
      await events?.stop();
      await outbox?.stop();
      await client?.close();
    },
  };
}

/** Without SVC_PUBLIC_BASE_URL no peer key can be fetched, so every call is refused. */
function unreachablePeers(): PeerDirectory {
  return {
    keyOf: async (serverId: string) => {
      throw new PeerKeyError(serverId, 'unreachable', 'federation is off (SVC_PUBLIC_BASE_URL)');
    },
  } as unknown as PeerDirectory;
}

/**
 * After a start, the event streams of the people from other servers who still have a live
 * device here and are not blocked (they would otherwise open on their next request).
 */
async function reopenBridges(db: Db, bridge: EventBridge, log: Logger): Promise<void> {
  try {
    const rows = await reachableRemotePeople(db.kysely);
    for (const row of rows) {
      const relay = row.homeServer!.toLowerCase();
      const user = row.username.endsWith(`@${relay}`)
        ? row.username.slice(0, -(relay.length + 1))
        : row.username;
      await bridge.refresh(row.id, relay, user);
    }
    if (rows.length > 0) log.info({ people: rows.length }, 'event bridges reopened');
  } catch (err) {
    log.warn({ err }, 'event bridges not reopened');
  }
}

/**
 * Blocked accounts (moderation's `onBlocked`, in the blocking transaction): a local person's
 * revocation goes to every host they used (through the s2s outbox); a person from another server
 * blocked here loses their live events once the block commits.
 */
export async function onAccountsBlocked(
  federation: Federation,
  tx: Tx,
  accounts: ReadonlyArray<{ id: string; username: string; homeServer: string | null }>,
): Promise<void> {
  for (const account of accounts) {
    if (account.homeServer !== null) {
      tx.onCommit(() => federation.service.forgetPerson(account.id));
      continue;
    }
    await federation.revocations.queueRevocation(tx, account.id, account.username, null);
  }
}
