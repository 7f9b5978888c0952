import path from 'node:path';

import { InvalidArgumentError, type Command } from 'commander';

import { EXIT, printJson, withDatabase, type CliIo } from './io.js';

// `svc import slack` and `svc import mattermost` (docs/operations.md, "Importing"). The work is
// in src/data/import/, loaded when a command runs.

const batchSize = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) {
    throw new InvalidArgumentError('a whole number from 1 to 100000');
  }
  return n;
};

interface ImportFlags {
  dryRun?: boolean;
  owner?: string;
  batch: number;
  name?: string;
  claimTokens?: string;
}

export function registerImportCommands(
  program: Command,
  io: CliIo,
  setExit: (code: number) => void,
): void {
  const group = program
    .command('import')
    .description(
      'import a community from Slack or Mattermost (idempotent: a second run adds only what is new)',
    );
  const run = (source: 'slack' | 'mattermost') => async (file: string, flags: ImportFlags) => {
    const [{ runImport }, { Progress }, { BlobStore }] = await Promise.all([
      import('../data/import/run-import.js'),
      import('../data/progress.js'),
      import('../services/files/blob-store.js'),
    ]);
    const report = await withDatabase(io, ({ db, config }) =>
      runImport(
        db,
        {
          source,
          blobs: new BlobStore(path.join(config.dataDir, 'blobs')),
          file: path.resolve(file),
          dryRun: flags.dryRun === true,
          batchSize: flags.batch,
          owner: flags.owner ?? null,
          claimTokens: flags.claimTokens ? path.resolve(flags.claimTokens) : null,
          name: flags.name ?? null,
        },
        new Progress(`import ${source}`, io.err, io.errIsTty ?? false),
      ),
    );
    printJson(io, report);
    if (report.problems.length > 0) setExit(EXIT.failed);
  };
  const common = (c: Command) =>
    c
      .option('--dry-run', 'read everything and print what would be created, writing nothing')
      .option('--owner <username>', 'an existing account to own each new workspace')
      .option(
        '--claim-tokens <file>',
        'write a token for each unclaimed account (CSV: username,email,token; valid 14 days) for people to set their password with',
      )
      .option('--batch <n>', 'messages written per transaction', batchSize, 2000);

  common(
    group
      .command('slack <export>')
      .description(
        'import a Slack workspace export (the .zip, or the folder it unpacks to): people, channels, direct and group messages, threads, reactions, pins',
      )
      .option('--name <name>', "the new workspace's name (default: the file's name)"),
  ).action(run('slack'));
  common(
    group
      .command('mattermost <file>')
      .description(
        'import a Mattermost bulk export (.jsonl, or a .zip holding one): teams, channels, people, posts with replies and reactions, direct messages',
      ),
  ).action(run('mattermost'));
}
