// `import`: `svc import slack` on a generated Slack export (test/data/_slack-generator.ts: every
// tenth message starts a thread of three replies, every seventh has a reaction, every fiftieth
// shares a file), run as the built command against a migrated database (SQLite, or PostgreSQL
// with --pg), held against issue 44's target of 5,000 messages a second. The export has
// BENCH_IMPORT_MESSAGES messages (200,000 by default) in 10 channels among 200 people. The
// CPU time of the process (GNU time) is reported beside the wall time: on a machine other work
// shares, it tells what the import itself costs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { generateSlackExport, zipFolder } from '../../test/data/_slack-generator.js';
import type { ScenarioResult } from '../lib/report.js';
import { createBackend } from '../lib/svc.js';

import type { Options } from './fanout.js';

const MESSAGES = Number(process.env.BENCH_IMPORT_MESSAGES ?? 200_000);
const CHANNELS = 10;
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const bin = path.join(root, 'bin/svc.js');
const gnuTime = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

export async function importScenario(opts: Options): Promise<ScenarioResult> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-import-'));
  const backend = await createBackend(opts.pg);
  try {
    const generated = generateSlackExport(path.join(scratch, 'export'), {
      users: 200,
      channels: CHANNELS,
      messagesPerChannel: Math.ceil(MESSAGES / CHANNELS),
    });
    const zip = path.join(scratch, 'export.zip');
    await zipFolder(generated.dir, zip);
    fs.rmSync(generated.dir, { recursive: true, force: true });
    const env = { PATH: process.env.PATH ?? '', ...backend.env, SVC_LOG_LEVEL: 'warn' };
    const migrated = spawnSync(process.execPath, [bin, 'migrate'], { env, encoding: 'utf8' });
    if (migrated.status !== 0) throw new Error(`svc migrate failed: ${migrated.stderr}`);

    const timeFile = path.join(scratch, 'time');
    const args = [bin, 'import', 'slack', zip];
    const [command, argv] = gnuTime
      ? [gnuTime, ['-f', '%U %S %M', '-o', timeFile, process.execPath, ...args]]
      : [process.execPath, args];
    const started = process.hrtime.bigint();
    const run = spawnSync(command, argv, { env, encoding: 'utf8', maxBuffer: 1 << 30 });
    const wallS = Number(process.hrtime.bigint() - started) / 1e9;
    if (run.status !== 0) throw new Error(`svc import slack exited ${run.status}: ${run.stderr}`);
    const report = JSON.parse(run.stdout) as { created: { messages: number }; seconds: number };
    let cpuS: number | null = null;
    let rssMiB: number | null = null;
    if (gnuTime) {
      const [user, system, maxKiB] = fs
        .readFileSync(timeFile, 'utf8')
        .trim()
        .split(/\s+/)
        .map(Number);
      cpuS = (user ?? 0) + (system ?? 0);
      rssMiB = Math.round((maxKiB ?? 0) / 1024);
    }
    const rate = report.created.messages / wallS;
    return {
      scenario: 'import',
      database: opts.pg ? 'postgres' : 'sqlite',
      rows: [
        {
          export: `Slack, ${generated.messages} messages (${generated.replies} replies, ${generated.reactions} reactions) in ${CHANNELS} channels`,
          zip_MiB: Math.round(fs.statSync(zip).size / 2 ** 20),
          messages: report.created.messages,
          wall_s: Number(wallS.toFixed(1)),
          messages_per_s: Math.round(rate),
          cpu_s: cpuS === null ? null : Number(cpuS.toFixed(1)),
          messages_per_cpu_s: cpuS ? Math.round(report.created.messages / cpuS) : null,
          max_rss_MiB: rssMiB,
        },
      ],
      targets: [
        {
          target: 'import of a generated Slack export >= 5,000 messages a second',
          met: rate >= 5000,
          detail: `${Math.round(rate)} messages/s over ${wallS.toFixed(1)} s, the process start included`,
        },
      ],
      notes: [
        `load average when done: ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')} on ${os.cpus().length} cores`,
      ],
    };
  } finally {
    await backend.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
