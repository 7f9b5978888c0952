import fs from 'node:fs';
import path from 'node:path';

import { generateSlackExport, zipFolder } from '../../test/data/_slack-generator.js';

import { runSvc, type TimedCommand } from './svc-command.js';

/**
 * Fills a migrated instance by `svc import slack` of a generated export (test/data/
 * _slack-generator.ts) of about `messages` messages in `channels` channels among 200 people: the
 * start of the `import` and `data` scenarios. Resolves to the export's description, its zip size
 * and the timed import with the count of messages it created.
 */
export async function importGeneratedSlack(
  env: Record<string, string>,
  scratch: string,
  opts: { messages: number; channels: number },
): Promise<{
  generated: ReturnType<typeof generateSlackExport>;
  zipBytes: number;
  run: TimedCommand;
  messages: number;
}> {
  const generated = generateSlackExport(path.join(scratch, 'export'), {
    users: 200,
    channels: opts.channels,
    messagesPerChannel: Math.ceil(opts.messages / opts.channels),
  });
  const zip = path.join(scratch, 'export.zip');
  await zipFolder(generated.dir, zip);
  fs.rmSync(generated.dir, { recursive: true, force: true });
  await runSvc(['migrate'], env, scratch);
  const run = await runSvc(['import', 'slack', zip], env, scratch);
  const report = JSON.parse(run.stdout) as { created: { messages: number } };
  return { generated, zipBytes: fs.statSync(zip).size, run, messages: report.created.messages };
}
