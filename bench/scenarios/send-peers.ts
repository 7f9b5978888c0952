// `send-peers`: svc's `send` on SQLite and on PostgreSQL beside the durable-send path of two real
// chat servers from Debian's packages, in the same run: ejabberd with its MUC archive (mod_mam)
// on the same PostgreSQL, and Prosody with mod_muc_mam on SQLite. Same client counts, same text;
// a message counts when the room reflects it to its sender, which both servers do only after the
// archive write (docs/performance.md, "Real peers for the send path").
import os from 'node:os';

import { ejabberdMissing, startEjabberd } from '../peers/ejabberd.js';
import type { Peer } from '../peers/peer.js';
import { prosodyMissing, startProsody } from '../peers/prosody.js';
import { connectSenders, peerCpuMeter, peerSend } from '../peers/send-load.js';
import type { ScenarioResult } from '../lib/report.js';

import { SEND_SECONDS, SEND_TEXT, svcSendPhase, WARMUP_MESSAGES } from './send.js';

const CLIENTS = [8, 32];

const PEERS: Array<{ missing: () => string | null; start: () => Promise<Peer> }> = [
  { missing: ejabberdMissing, start: startEjabberd },
  { missing: prosodyMissing, start: startProsody },
];

async function peerRows(peer: Peer): Promise<ScenarioResult['rows']> {
  const rows: ScenarioResult['rows'] = [];
  const senders = await connectSenders(peer, Math.max(...CLIENTS));
  try {
    let acknowledged = 0;
    for (const clients of CLIENTS) {
      const active = senders.slice(0, clients);
      acknowledged += (await peerSend(active, SEND_TEXT, 1, WARMUP_MESSAGES)).sent;
      const cpu = peerCpuMeter(peer);
      const r = await peerSend(active, SEND_TEXT, SEND_SECONDS);
      const used = cpu();
      acknowledged += r.sent;
      const perMessage = (s: number) => Number(((s * 1000) / Math.max(r.sent, 1)).toFixed(3));
      rows.push({
        target: peer.name,
        clients,
        messages_per_s: Math.round(r.perSecond),
        p99_ms: r.p99,
        errors: r.errors,
        server_cpu_s: used.server,
        server_ms_per_message: perMessage(used.server),
        ...(used.database === undefined
          ? {}
          : {
              database_cpu_s: Number(used.database.toFixed(2)),
              database_ms_per_message: perMessage(used.database),
            }),
      });
    }
    // Acknowledged must mean archived: every reflected message is in the archive's table.
    const archived = await peer.archived();
    if (archived < acknowledged) {
      throw new Error(`${peer.name}: ${acknowledged} acknowledged, ${archived} archived`);
    }
  } finally {
    await Promise.all(senders.map((s) => s.client.close()));
  }
  return rows;
}

export async function sendPeers(): Promise<ScenarioResult> {
  const rows: ScenarioResult['rows'] = [];
  const notes: string[] = [
    `load average at the start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  ];
  // BENCH_PEERS_ONLY=1 leaves svc out (while working on a peer's setup).
  for (const usePg of process.env.BENCH_PEERS_ONLY ? [] : [false, true]) {
    const svc = await svcSendPhase(usePg);
    for (const row of svc.rows) {
      rows.push({
        ...row,
        target: `svc sendMessage, ${usePg ? 'PostgreSQL' : 'SQLite'}`,
        server_ms_per_message: Number(
          (1000 / Math.max(Number(row.messages_per_cpu_s), 1)).toFixed(3),
        ),
      });
    }
  }
  for (const { missing, start } of PEERS) {
    const why = missing();
    if (why) {
      notes.push(`skipped a peer: ${why} (install with: sh bench/peers/install.sh)`);
      continue;
    }
    const peer = await start();
    try {
      rows.push(...(await peerRows(peer)));
    } finally {
      await peer.stop();
    }
  }
  notes.push(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  // The target: svc, on either database, ahead of every peer at 8 and 32 clients (messages a second).
  const targets: ScenarioResult['targets'] = [];
  for (const clients of CLIENTS) {
    const at = rows.filter((r) => r.clients === clients);
    const svcWorst = Math.min(
      ...at.filter((r) => String(r.target).startsWith('svc')).map((r) => Number(r.messages_per_s)),
    );
    const peers = at.filter((r) => !String(r.target).startsWith('svc'));
    if (!peers.length || peers.length === at.length) continue;
    const best = Math.max(...peers.map((r) => Number(r.messages_per_s)));
    targets.push({
      target: `svc ahead of every peer at ${clients} clients`,
      met: svcWorst > best,
      detail: at.map((r) => `${r.target}: ${r.messages_per_s}`).join('; '),
    });
  }
  return { scenario: 'send-peers', database: 'sqlite', rows, targets, notes };
}
