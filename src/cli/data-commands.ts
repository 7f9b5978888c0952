import path from 'node:path';

import type { Command } from 'commander';

import { cliConfig, cliLogger, EXIT, printJson, type CliIo } from './io.js';

// `svc backup`, `svc restore` (docs/operations.md, "Backups"). The work is in src/data/, loaded
// when a command runs.

export function registerDataCommands(
  program: Command,
  io: CliIo,
  setExit: (code: number) => void,
): void {
  program
    .command('backup <path>')
    .description(
      'write a backup of the database, stored files and server keys into a new folder (safe while the server runs); --verify checks one instead',
    )
    .option(
      '--verify',
      'check the backup at <path> (every checksum, count and file) without restoring it',
    )
    .action(async (dir: string, opts: { verify?: boolean }) => {
      const target = path.resolve(dir);
      const { Progress } = await import('../data/progress.js');
      if (opts.verify) {
        const { verifyBackup } = await import('../data/verify.js');
        const result = await verifyBackup(
          target,
          new Progress('backup --verify', io.err, io.errIsTty ?? false),
        );
        printJson(io, {
          path: target,
          whole: result.problems.length === 0,
          problems: result.problems,
          createdAt: result.manifest.createdAt,
          dialect: result.manifest.dialect,
          counts: result.manifest.counts,
          files: result.manifest.blobs.count,
        });
        if (result.problems.length > 0) setExit(EXIT.failed);
        return;
      }
      const [{ config, secrets }, { backup }] = await Promise.all([
        cliConfig(io),
        import('../data/backup.js'),
      ]);
      const manifest = await backup(
        { databaseUrl: secrets.databaseUrl, dataDir: config.dataDir },
        target,
        new Progress('backup', io.err, io.errIsTty ?? false),
      );
      printJson(io, {
        path: target,
        createdAt: manifest.createdAt,
        dialect: manifest.dialect,
        schema: manifest.migrations.at(-1),
        counts: manifest.counts,
        files: manifest.blobs.count,
        fileBytes: manifest.blobs.bytes,
      });
    });

  program
    .command('restore <path>')
    .description(
      'restore a backup into an empty data directory or an empty PostgreSQL database, then migrate it',
    )
    .action(async (dir: string) => {
      const [{ config, secrets }, { restore }, { Progress }, { openAppDatabase }, log] =
        await Promise.all([
          cliConfig(io),
          import('../data/restore.js'),
          import('../data/progress.js'),
          import('../app-database.js'),
          cliLogger(io),
        ]);
      const result = await restore(
        { databaseUrl: secrets.databaseUrl, dataDir: config.dataDir },
        path.resolve(dir),
        () => openAppDatabase(config, secrets, log, { passive: true }),
        new Progress('restore', io.err, io.errIsTty ?? false),
      );
      printJson(io, {
        restored: path.resolve(dir),
        createdAt: result.manifest.createdAt,
        counts: result.manifest.counts,
        files: result.manifest.blobs.count,
        migrationsApplied: result.migrationsApplied,
      });
    });
}
