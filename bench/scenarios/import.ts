// `import`: `svc import slack` on a generated Slack export (test/data/_slack-generator.ts: every
// tenth message starts a thread of three replies, every seventh has a reaction, every fiftieth
// shares a file), run as the built command against a migrated database (SQLite, or PostgreSQL
// with --pg), held against issue 44's target of 5,000 messages a second. The export has
// BENCH_IMPORT_MESSAGES messages (200,000 by default) in 10 channels among 200 people. The
// CPU time of the process (GNU time) is reported beside the wall time: on a machine other work
// shares, it tells what the import itself costs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { ScenarioResult } from '../lib/report.js';
import { importGeneratedSlack } from '../lib/slack-import.js';
import { createBackend } from '../lib/svc.js';

import type { Options } from './fanout.js';

const MESSAGES = Number(process.env.BENCH_IMPORT_MESSAGES ?? 200_000);
const CHANNELS = 10;

export async function importScenario(opts: Options): Promise<ScenarioResult> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-import-'));
  const backend = await createBackend(opts.pg);
  try {
    const { generated, zipBytes, run, messages } = await importGeneratedSlack(
      backend.env,
      scratch,
      { messages: MESSAGES, channels: CHANNELS },
    );
    const { wallS, cpuS, maxRssMiB: rssMiB } = run;
    const rate = messages / wallS;
    return {
      scenario: 'import',
      database: opts.pg ? 'postgres' : 'sqlite',
      rows: [
        {
          export: `Slack, ${generated.messages} messages (${generated.replies} replies, ${generated.reactions} reactions) in ${CHANNELS} channels`,
          zip_MiB: Math.round(zipBytes / 2 ** 20),
          messages,
          wall_s: Number(wallS.toFixed(1)),
          messages_per_s: Math.round(rate),
          cpu_s: cpuS === null ? null : Number(cpuS.toFixed(1)),
          messages_per_cpu_s: cpuS ? Math.round(messages / cpuS) : null,
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
