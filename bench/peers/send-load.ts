// The send benchmark's load against an XMPP peer: each client in a MUC room of its own (as each
// of svc's senders has a channel of its own), sending one message at a time and counting it
// acknowledged when the room reflects it back.
import { cpuSeconds, percentile, postgresCpuSeconds } from '../lib/proc.js';

import type { Peer } from './peer.js';
import { XmppClient } from './xmpp-client.js';

export interface Sender {
  client: XmppClient;
  room: string;
  nick: string;
}

/** `count` signed-in clients, each joined to its own (new, archived) room. */
export async function connectSenders(peer: Peer, count: number): Promise<Sender[]> {
  const run = Date.now().toString(36);
  const senders: Sender[] = [];
  for (let i = 0; i < count; i++) {
    const user = `snd${i}${run}`;
    const client = await XmppClient.connect(peer.port, peer.domain);
    await client.register(user, `pw-${user}`);
    await client.login(user, `pw-${user}`);
    const room = `send${i}${run}@${peer.mucDomain}`;
    await client.join(room, user);
    senders.push({ client, room, nick: user });
  }
  return senders;
}

export interface PeerFigures {
  sent: number;
  perSecond: number;
  p99: number;
  /** Reflections without the archive's stanza id, and refusals. */
  errors: number;
}

/**
 * Each sender sends one message at a time for `seconds`, and on until `atLeast` messages were
 * acknowledged in all (a warm-up's floor: on a busy machine a few seconds may be a few dozen
 * messages, too few for a server's code to be compiled before the measured phase).
 */
export async function peerSend(
  senders: Sender[],
  text: string,
  seconds: number,
  atLeast = 0,
): Promise<PeerFigures> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    senders.map(async ({ client, room, nick }) => {
      while (performance.now() < end || latencies.length + errors < atLeast) {
        const t = performance.now();
        try {
          const { archived } = await client.groupchat(room, nick, text);
          if (archived) latencies.push(performance.now() - t);
          else errors++;
        } catch {
          errors++;
          return; // a refused or closed stream sends no more
        }
      }
    }),
  );
  return {
    sent: latencies.length,
    perSecond: latencies.length / seconds,
    p99: percentile(latencies, 99),
    errors,
  };
}

/** The server's CPU (and PostgreSQL's, when its archive is there) over a measured phase. */
export function peerCpuMeter(peer: Peer): () => { server: number; database?: number } {
  const server0 = cpuSeconds(peer.pid);
  const database0 = peer.usesPostgres ? postgresCpuSeconds() : 0;
  return () => ({
    server: cpuSeconds(peer.pid) - server0,
    ...(peer.usesPostgres ? { database: postgresCpuSeconds() - database0 } : {}),
  });
}
