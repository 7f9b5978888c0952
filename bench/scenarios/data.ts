// `data`: issue 44's measures of backup, restore and import on one instance of
// BENCH_DATA_MESSAGES messages (1,000,000 by default) in 10 channels among 200 people, with
// BENCH_DATA_ATTACHMENTS files (2,000 by default, 16-48 KiB each), on SQLite or (--pg)
// PostgreSQL:
//
// 1. `svc import slack` of the generated export that fills it (test/data/_slack-generator.ts):
//    messages a second, against 5,000.
// 2. `svc backup` of the running server's instance, beside a reference copy of the same data by
//    the database's own means (SQLite's online backup, what `.backup` runs; PostgreSQL's `COPY
//    ... TO STDOUT` of every table into a file, in one repeatable-read transaction) plus a copy
//    of the blob folder: svc's time against the reference's, at least 50% of its speed.
// 3. The same backup again while 8 clients send messages: their p99 against the p99 of the same
//    sends without a backup (at most 2x), and the server's RSS growth meanwhile (< 256 MiB).
// 4. `svc restore` of that backup into an empty database: its time.
//
// The commands run as built processes under GNU time (CPU seconds and peak RSS of each). Try it
// small first: BENCH_DATA_MESSAGES=50000 BENCH_DATA_ATTACHMENTS=200 npm run bench -- data.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { v7 as uuidv7 } from 'uuid';

import { BlobStore } from '../../src/services/files/blob-store.js';
import { gql, signup, type Session } from '../lib/client.js';
import { percentile, rssBytes, sleep } from '../lib/proc.js';
import type { ScenarioResult } from '../lib/report.js';
import { SEND } from '../lib/setup.js';
import { importGeneratedSlack } from '../lib/slack-import.js';
import { runSvc } from '../lib/svc-command.js';
import { createBackend, startSvc, type Backend } from '../lib/svc.js';

import type { Options } from './fanout.js';

const MESSAGES = Number(process.env.BENCH_DATA_MESSAGES ?? 1_000_000);
const ATTACHMENTS = Number(process.env.BENCH_DATA_ATTACHMENTS ?? 2000);
const CHANNELS = 10;
const SENDERS = 8;
const BASELINE_SECONDS = 10;
const MiB = 2 ** 20;
/** Attaches `count` stored files (16-48 KiB, a PDF by their header) to the newest messages. */
async function addAttachments(backend: Backend, count: number): Promise<number> {
  const blobs = new BlobStore(path.join(backend.dataDir, 'blobs'));
  const stored: { sha256: string; sizeBytes: number }[] = [];
  for (let i = 0; i < count; i++) {
    const bytes = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      randomBytes(16384 + ((i * 7919) % 32768)),
    ]);
    stored.push(
      await blobs.put(
        (async function* () {
          yield bytes;
        })(),
        { maxBytes: 64 * 1024 },
      ),
    );
  }
  const columns = [
    'id',
    'conversationId',
    'workspaceId',
    'uploaderId',
    'fileName',
    'contentType',
    'uploadTokenHash',
    'uploadExpiresAt',
    'sha256',
    'sizeBytes',
    'width',
    'height',
    'uploadedAt',
    'messageId',
    'finalizedAt',
    'createdAt',
  ];
  type Message = {
    id: string;
    conversationId: string;
    workspaceId: string;
    authorId: string;
    createdAt: number;
  };
  const rowsOf = (messages: Message[]) =>
    messages.map((m, i) => {
      const b = stored[i]!;
      const at = Number(m.createdAt);
      const id = uuidv7({ msecs: at });
      return [
        id,
        m.conversationId,
        m.workspaceId,
        m.authorId,
        `report-${i}.pdf`,
        'application/pdf',
        'imported',
        at,
        b.sha256,
        b.sizeBytes,
        null,
        null,
        at,
        m.id,
        at,
        at,
      ];
    });
  const newest = `select id, "conversationId", "workspaceId", "authorId", "createdAt" from message order by "createdAt" desc limit ${count}`;
  if (backend.kind === 'sqlite') {
    const db = new Sqlite(path.join(backend.dataDir, 'svc.sqlite'));
    try {
      const insert = db.prepare(
        `insert into attachment (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map(() => '?').join(', ')})`,
      );
      const rows = rowsOf(db.prepare(newest).all() as Message[]);
      db.transaction(() => rows.forEach((r) => insert.run(...r)))();
      return rows.length;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: backend.env.SVC_DATABASE_URL });
  await client.connect();
  try {
    const rows = rowsOf((await client.query<Message>(newest)).rows);
    await client.query('begin');
    for (const r of rows) {
      await client.query(
        `insert into attachment (${columns.map((c) => `"${c}"`).join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
        r,
      );
    }
    await client.query('commit');
    return rows.length;
  } finally {
    await client.end();
  }
}

/** The reference copy: the database by its own means, then the blob folder; seconds and bytes. */
async function referenceCopy(
  backend: Backend,
  dest: string,
): Promise<{ seconds: number; bytes: number }> {
  fs.mkdirSync(dest, { recursive: true });
  const started = performance.now();
  if (backend.kind === 'sqlite') {
    const db = new Sqlite(path.join(backend.dataDir, 'svc.sqlite'), { readonly: true });
    try {
      await db.backup(path.join(dest, 'svc.sqlite'));
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: backend.env.SVC_DATABASE_URL });
    await client.connect();
    try {
      await client.query('begin isolation level repeatable read read only');
      const { rows } = await client.query<{ name: string }>(
        'select tablename as name from pg_tables where schemaname = current_schema() order by 1',
      );
      for (const { name } of rows) {
        await pipeline(
          client.query(copyTo(`copy "${name}" to stdout`)),
          fs.createWriteStream(path.join(dest, `${name}.copy`)),
        );
      }
      await client.query('commit');
    } finally {
      await client.end();
    }
  }
  await fs.promises.cp(path.join(backend.dataDir, 'blobs'), path.join(dest, 'blobs'), {
    recursive: true,
  });
  return { seconds: (performance.now() - started) / 1000, bytes: folderBytes(dest) };
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    total += e.isDirectory() ? folderBytes(full) : fs.statSync(full).size;
  }
  return total;
}

/** Sends from each sender in a loop until `done` resolves; the latencies of the sends. */
async function sendUntil(
  base: string,
  senders: { s: Session; conv: string }[],
  done: Promise<unknown>,
) {
  let over = false;
  void done.finally(() => (over = true));
  const latencies: number[] = [];
  let errors = 0;
  await Promise.all(
    senders.map(async ({ s, conv }) => {
      while (!over) {
        const t = performance.now();
        try {
          await gql(
            base,
            SEND,
            { i: { conversationId: conv, text: 'sent while the data moves' } },
            s,
          );
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { latencies, errors };
}

/** Samples a process's RSS every 200 ms until `done` resolves; the highest seen. */
async function peakRss(pid: number, done: Promise<unknown>): Promise<number> {
  let over = false;
  void done.finally(() => (over = true));
  let peak = rssBytes(pid);
  while (!over) {
    await sleep(200);
    peak = Math.max(peak, rssBytes(pid));
  }
  return peak;
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

export async function dataScenario(opts: Options): Promise<ScenarioResult> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-data-'));
  const backend = await createBackend(opts.pg);
  const restored = await createBackend(opts.pg);
  const notes: string[] = [`load average at the start: ${load()} on ${os.cpus().length} cores`];
  try {
    // 1. The instance, by the import of a generated Slack export.
    const { run: imported, messages } = await importGeneratedSlack(backend.env, scratch, {
      messages: MESSAGES,
      channels: CHANNELS,
    });
    const importRate = messages / imported.wallS;
    notes.push(`load average after the import: ${load()}`);
    const attachments = await addAttachments(backend, ATTACHMENTS);

    // 2. Backup and the reference, the server running and idle.
    const server = await startSvc(backend);
    const rows: ScenarioResult['rows'] = [];
    let p99Without = 0;
    let p99During = 0;
    let rssGrowthMiB = 0;
    let backupS = 0;
    let referenceS = 0;
    let restoreS = 0;
    try {
      const backup1 = await runSvc(
        ['backup', path.join(scratch, 'backup-1')],
        backend.env,
        scratch,
      );
      backupS = backup1.wallS;
      const reference = await referenceCopy(backend, path.join(scratch, 'reference'));
      referenceS = reference.seconds;
      notes.push(`load average after the backup and the reference: ${load()}`);

      // 3. Sends without, then during, a second backup.
      const senders: { s: Session; conv: string }[] = [];
      for (let i = 0; i < SENDERS; i++) {
        const s = await signup(server.url, `dsnd${i}${Date.now().toString(36)}`);
        const ws = await gql(
          server.url,
          'mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { channels { id } } }',
          { i: { name: `data ${i}` } },
          s,
        );
        senders.push({ s, conv: ws.data.createWorkspace.channels[0].id });
      }
      await sendUntil(server.url, senders, sleep(2000));
      const without = await sendUntil(server.url, senders, sleep(BASELINE_SECONDS * 1000));
      p99Without = percentile(without.latencies, 99);
      const rssBefore = rssBytes(server.proc.pid);
      const backup2 = runSvc(['backup', path.join(scratch, 'backup-2')], backend.env, scratch);
      const [during, peak, backup2Done] = await Promise.all([
        sendUntil(server.url, senders, backup2),
        peakRss(server.proc.pid, backup2),
        backup2,
      ]);
      p99During = percentile(during.latencies, 99);
      rssGrowthMiB = (peak - rssBefore) / MiB;
      notes.push(`load average after the backup under sends: ${load()}`);
      rows.push(
        {
          step: 'import (svc import slack)',
          messages,
          wall_s: Number(imported.wallS.toFixed(1)),
          messages_per_s: Math.round(importRate),
          cpu_s: imported.cpuS,
          max_rss_MiB: imported.maxRssMiB,
        },
        {
          step: 'svc backup (server idle)',
          wall_s: Number(backupS.toFixed(1)),
          cpu_s: backup1.cpuS,
          max_rss_MiB: backup1.maxRssMiB,
          MiB: Math.round(folderBytes(path.join(scratch, 'backup-1')) / MiB),
        },
        {
          step: `reference (${opts.pg ? 'COPY TO STDOUT per table, one snapshot' : 'SQLite online backup'} + blob folder copy)`,
          wall_s: Number(referenceS.toFixed(1)),
          MiB: Math.round(reference.bytes / MiB),
        },
        {
          step: `svc backup while ${SENDERS} clients send`,
          wall_s: Number(backup2Done.wallS.toFixed(1)),
          cpu_s: backup2Done.cpuS,
          max_rss_MiB: backup2Done.maxRssMiB,
          sends: during.latencies.length,
          send_errors: during.errors,
          send_p99_ms: Number(p99During.toFixed(1)),
          send_p99_without_ms: Number(p99Without.toFixed(1)),
          server_rss_growth_MiB: Math.round(rssGrowthMiB),
        },
      );
    } finally {
      await server.proc.stop();
    }

    // 4. Restore into an empty database.
    const restore = await runSvc(
      ['restore', path.join(scratch, 'backup-1')],
      restored.env,
      scratch,
    );
    restoreS = restore.wallS;
    rows.push({
      step: 'svc restore (into an empty database)',
      wall_s: Number(restoreS.toFixed(1)),
      cpu_s: restore.cpuS,
      max_rss_MiB: restore.maxRssMiB,
    });
    notes.push(`load average at the end: ${load()}`);
    return {
      scenario: 'data',
      database: opts.pg ? 'postgres' : 'sqlite',
      rows: rows.map((r) => ({ messages: MESSAGES, attachments, ...r })),
      targets: [
        {
          target: 'backup time >= 50% of the reference copy speed',
          met: referenceS / backupS >= 0.5,
          detail: `svc backup ${backupS.toFixed(1)} s, reference ${referenceS.toFixed(1)} s: ${Math.round((100 * referenceS) / backupS)}% of its speed`,
        },
        {
          target: 'sends during the backup keep p99 within 2x of without',
          met: p99During <= 2 * p99Without,
          detail: `p99 ${p99During.toFixed(1)} ms during, ${p99Without.toFixed(1)} ms without`,
        },
        {
          target: 'import of a generated Slack export >= 5,000 messages a second',
          met: importRate >= 5000,
          detail: `${Math.round(importRate)} messages/s over ${imported.wallS.toFixed(1)} s, the process start included`,
        },
        {
          target: "the server's RSS growth during the backup < 256 MiB",
          met: rssGrowthMiB < 256,
          detail: `${Math.round(rssGrowthMiB)} MiB (commands' own peaks: import ${imported.maxRssMiB}, restore ${restore.maxRssMiB} MiB)`,
        },
      ],
      notes,
    };
  } finally {
    await backend.drop();
    await restored.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
