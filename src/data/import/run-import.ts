import type { Db } from '../../db/database.js';
import type { BlobStore } from '../../services/files/index.js';
import type { Progress } from '../progress.js';

import { readMattermostExport } from './mattermost.js';
import type { ImportSource, SourceName } from './model.js';
import type { ImportReport } from './report.js';
import { readSlackExport } from './slack.js';
import { writeImport } from './writer.js';

// `svc import slack|mattermost <file>`: reads the export, writes it (docs/operations.md,
// "Importing"), and answers the report the command prints.

export interface ImportCommand {
  source: SourceName;
  /** The data directory's blob store, for the files the export carries. */
  blobs: BlobStore;
  file: string;
  dryRun: boolean;
  batchSize: number;
  owner: string | null;
  claimTokens: string | null;
  /** Slack only: the new workspace's name. */
  name: string | null;
}

export async function runImport(
  db: Db,
  cmd: ImportCommand,
  progress: Progress,
): Promise<ImportReport> {
  progress.update({ step: `reading ${cmd.file}` });
  const source: ImportSource =
    cmd.source === 'slack'
      ? await readSlackExport(cmd.file, { name: cmd.name })
      : await readMattermostExport(cmd.file);
  try {
    const report = await writeImport(db, source, {
      file: cmd.file,
      blobs: cmd.blobs,
      dryRun: cmd.dryRun,
      batchSize: cmd.batchSize,
      owner: cmd.owner,
      claimTokens: cmd.claimTokens,
      onProgress: (n) => progress.update({ step: 'messages', rows: n }),
    });
    const c = report.created;
    progress.done(
      `${cmd.dryRun ? 'would create' : 'created'} ${c.accounts} accounts, ${c.workspaces} workspaces, ` +
        `${c.channels + c.directConversations + c.groupConversations} conversations, ${c.messages} messages` +
        (report.problems.length ? `; ${report.problems.length} problems` : ''),
    );
    return report;
  } finally {
    await source.close();
  }
}
