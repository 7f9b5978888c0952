// `files`: 8 concurrent 25 MiB uploads through POST /api/files/upload, then 8 concurrent downloads
// through GET /api/attachments/{id}/download, against a bare Fastify route that streams the same
// bytes to and from disk (bench/reference/fastify-files.ts) in the same run. Server RSS is sampled
// throughout: streaming means it must not grow with the bytes in flight.
import { randomBytes } from 'node:crypto';
import http from 'node:http';

import { gql, type Session } from '../lib/client.js';
import { cpuSeconds, rssBytes } from '../lib/proc.js';
import { startReference } from '../lib/reference.js';
import type { ScenarioResult } from '../lib/report.js';
import { prepareWorkspace, SEND } from '../lib/setup.js';
import { createBackend, startSvc } from '../lib/svc.js';

import type { Options } from './fanout.js';

const MiB = 1024 * 1024;
const FILE_BYTES = 25 * MiB;
const CONCURRENT = 8;
const ROUNDS = 3;
const BOUNDARY = 'svcbenchfilesboundary';

// A PDF by its magic number, then incompressible bytes: the type check passes on the header.
const payload = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(FILE_BYTES - 9)]);

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function multipartHead(fields: Record<string, string>): Buffer {
  let head = '';
  for (const [name, value] of Object.entries(fields)) {
    head += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  head += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="report.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  return Buffer.from(head);
}
const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/** Streams one multipart upload in 256 KiB writes; resolves with the answer's status and body. */
function upload(
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  const head = multipartHead(fields);
  const length = head.length + payload.length + tail.length;
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent,
        headers: {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': length,
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.write(head);
    let offset = 0;
    const step = 256 * 1024;
    const pump = () => {
      while (offset < payload.length) {
        const more = req.write(payload.subarray(offset, offset + step));
        offset += step;
        if (!more) return void req.once('drain', pump);
      }
      req.end(tail);
    };
    pump();
  });
}

/** Downloads one file, counting its bytes without keeping them. */
function download(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'GET', agent, headers },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`download ${url}: ${res.statusCode}`));
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Samples a process's RSS every 20 ms while `work` runs; answers the highest sample. */
async function peakRss<T>(
  pid: number,
  work: () => Promise<T>,
): Promise<{ result: T; peak: number }> {
  let peak = rssBytes(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 20);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, rssBytes(pid)) };
  } finally {
    clearInterval(timer);
  }
}

interface Round {
  uploadSeconds: number;
  downloadSeconds: number;
  cpu: number;
}

async function timed<T>(work: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await work();
  return (performance.now() - t0) / 1000;
}

const mibPerSecond = (seconds: number) => (CONCURRENT * FILE_BYTES) / MiB / seconds;

export async function files(opts: Options): Promise<ScenarioResult> {
  const backend = await createBackend(opts.pg);
  // The backend's data directory holds svc's blobs and the reference's files: the same disk.
  const svc = await startSvc(backend);
  const ref = await startReference('fastify-files', { REFERENCE_DIR: backend.dataDir });
  const svcRounds: Round[] = [];
  const refRounds: Round[] = [];
  let rssBefore = 0;
  let rssPeak = 0;
  try {
    const space = await prepareWorkspace(svc.url, 1);
    const me: Session = space.owner;
    const auth = { cookie: me.cookie, 'x-csrf-token': me.csrf };

    async function svcRound(): Promise<Round> {
      const created = await Promise.all(
        Array.from({ length: CONCURRENT }, async (_, i) => {
          const r = await gql(
            svc.url,
            `mutation($c: ID!, $n: String!) { createAttachment(input: { conversationId: $c, fileName: $n, contentType: "application/pdf" }) { attachmentId uploadToken } }`,
            { c: space.channelId, n: `report-${i}.pdf` },
            me,
          );
          return r.data.createAttachment as { attachmentId: string; uploadToken: string };
        }),
      );
      const cpu0 = cpuSeconds(svc.proc.pid);
      const uploadSeconds = await timed(() =>
        Promise.all(
          created.map(async (a) => {
            const res = await upload(
              `${svc.url}/api/files/upload`,
              { upload_token: a.uploadToken, attachment_id: a.attachmentId },
              auth,
            );
            if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.body}`);
          }),
        ),
      );
      const msg = await gql(
        svc.url,
        SEND,
        { i: { conversationId: space.channelId, text: 'files' } },
        me,
      );
      for (const a of created) {
        await gql(
          svc.url,
          'mutation($a: ID!, $m: ID!) { finalizeAttachment(input: { attachmentId: $a, messageId: $m }) { id } }',
          { a: a.attachmentId, m: msg.data.sendMessage.id },
          me,
        );
      }
      const downloadSeconds = await timed(() =>
        Promise.all(
          created.map(async (a) => {
            const n = await download(`${svc.url}/api/attachments/${a.attachmentId}/download`, {
              cookie: me.cookie,
            });
            if (n !== FILE_BYTES) throw new Error(`download returned ${n} bytes`);
          }),
        ),
      );
      return { uploadSeconds, downloadSeconds, cpu: cpuSeconds(svc.proc.pid) - cpu0 };
    }

    async function refRound(): Promise<Round> {
      const names: string[] = [];
      const cpu0 = cpuSeconds(ref.proc.pid);
      const uploadSeconds = await timed(() =>
        Promise.all(
          Array.from({ length: CONCURRENT }, async () => {
            const res = await upload(`${ref.url}/upload`, { note: 'reference' }, {});
            if (res.status !== 200) throw new Error(`reference upload: ${res.status} ${res.body}`);
            names.push((JSON.parse(res.body) as { name: string }).name);
          }),
        ),
      );
      const downloadSeconds = await timed(() =>
        Promise.all(
          names.map(async (name) => {
            const n = await download(`${ref.url}/download/${name}`, {});
            if (n !== FILE_BYTES) throw new Error(`reference download returned ${n} bytes`);
          }),
        ),
      );
      return { uploadSeconds, downloadSeconds, cpu: cpuSeconds(ref.proc.pid) - cpu0 };
    }

    // Warm-up of both, then rounds taken in turn so that both see the same disk.
    await refRound();
    await svcRound();
    if (typeof global.gc === 'function') global.gc();
    rssBefore = rssBytes(svc.proc.pid);
    rssPeak = rssBefore;
    for (let i = 0; i < ROUNDS; i++) {
      refRounds.push(await refRound());
      const { result, peak } = await peakRss(svc.proc.pid, svcRound);
      svcRounds.push(result);
      rssPeak = Math.max(rssPeak, peak);
    }
  } finally {
    await svc.proc.stop();
    await ref.proc.stop();
    await backend.drop();
  }

  const median = (xs: number[]) =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const summarize = (name: string, rounds: Round[]) => {
    const up = median(rounds.map((r) => r.uploadSeconds));
    const down = median(rounds.map((r) => r.downloadSeconds));
    return {
      up,
      down,
      row: {
        case: name,
        upload_mib_per_s: Math.round(mibPerSecond(up)),
        download_mib_per_s: Math.round(mibPerSecond(down)),
        upload_s: up,
        download_s: down,
        server_cpu_s_per_round: median(rounds.map((r) => r.cpu)),
      },
    };
  };
  const s = summarize('svc', svcRounds);
  const r = summarize('reference Fastify route', refRounds);
  const upShare = r.up / s.up;
  const downShare = r.down / s.down;
  const growth = (rssPeak - rssBefore) / MiB;
  return {
    scenario: 'files',
    database: opts.pg ? 'postgres' : 'sqlite',
    rows: [s.row, r.row],
    targets: [
      {
        target: 'upload throughput >= 70% of the reference',
        met: upShare >= 0.7,
        detail: `${(upShare * 100).toFixed(0)}%`,
      },
      {
        target: 'download throughput >= 70% of the reference',
        met: downShare >= 0.7,
        detail: `${(downShare * 100).toFixed(0)}%`,
      },
      {
        target: 'server RSS grows by < 64 MiB during the run',
        met: growth < 64,
        detail: `${growth.toFixed(1)} MiB (${(rssBefore / MiB).toFixed(0)} → ${(rssPeak / MiB).toFixed(0)} MiB peak)`,
      },
    ],
    notes: [
      `${CONCURRENT} concurrent ${FILE_BYTES / MiB} MiB files per round, median of ${ROUNDS} rounds; both servers write a temporary file, fsync and rename`,
    ],
  };
}
