import path from 'node:path';

import type { Command } from 'commander';

import { cliConfig, printJson, withDatabase, type CliIo } from './io.js';

// `svc export workspace <id>` and `svc export account <username>` (docs/export.md). The work is
// in src/data/export/, loaded when a command runs.

/** A new folder's name for an export made now, in the working directory. */
function defaultFolder(kind: string, name: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return path.resolve(`svc-export-${kind}-${name.replace(/[^A-Za-z0-9_-]+/g, '_')}-${stamp}`);
}

export function registerExportCommands(program: Command, io: CliIo): void {
  const exp = program
    .command('export')
    .description(
      'write a workspace or an account as JSON Lines with their files into a new folder (docs/export.md)',
    );

  const run = async (
    kind: 'workspace' | 'account',
    subject: string,
    folder: string | undefined,
  ) => {
    const [{ config }, ex, { Progress }, { BlobStore }, { normalizeUsername }, queries] =
      await Promise.all([
        cliConfig(io),
        import('../data/export/export.js'),
        import('../data/progress.js'),
        import('../services/files/blob-store.js'),
        import('../services/accounts/username.js'),
        import('../services/accounts/queries.js'),
      ]);
    await withDatabase(io, async ({ db }) => {
      const source = { db, blobs: new BlobStore(path.join(config.dataDir, 'blobs')) };
      const progress = new Progress('export', io.err, io.errIsTty ?? false);
      let manifest;
      if (kind === 'workspace') {
        const dir = path.resolve(folder ?? defaultFolder('workspace', subject));
        manifest = await ex.exportWorkspace(source, subject, dir, progress);
        printJson(io, { path: dir, ...summary(manifest) });
        return;
      }
      const { ExportRefusal } = ex;
      let key: string;
      try {
        key = normalizeUsername(subject).key;
      } catch {
        throw new ExportRefusal(`"${subject}" is not a username`);
      }
      const account = await queries.findAccountByUsernameKey(db.kysely, key);
      if (!account) throw new ExportRefusal(`there is no account named ${subject}`);
      const dir = path.resolve(folder ?? defaultFolder('account', account.username));
      manifest = await ex.exportAccount(source, account.id, dir, progress);
      printJson(io, { path: dir, ...summary(manifest) });
    });
  };

  exp
    .command('workspace <id> [folder]')
    .description(
      "a workspace: its people, channels (private and archived too), members, messages with edits, reactions, pins and attachments, custom emoji, and the files; encrypted conversations as the server's ciphertext",
    )
    .action((id: string, folder: string | undefined) => run('workspace', id, folder));
  exp
    .command('account <username> [folder]')
    .description(
      "what the server holds about a person and what they wrote: account, sessions, workspaces, conversations, their messages with edits and attachments, their reactions, their avatar (what they download in the web client's settings)",
    )
    .action((username: string, folder: string | undefined) => run('account', username, folder));
}

function summary(m: {
  createdAt: string;
  scope: unknown;
  parts: { file: string; rows: number }[];
  files: { count: number; bytes: number };
}) {
  return {
    createdAt: m.createdAt,
    scope: m.scope,
    records: Object.fromEntries(m.parts.map((p) => [p.file, p.rows])),
    files: m.files.count,
    fileBytes: m.files.bytes,
  };
}
