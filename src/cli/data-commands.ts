import path from 'node:path';

import type { Command } from 'commander';

import { cliConfig, cliLogger, EXIT, printJson, type CliIo } from './io.js';

// `svc backup`, `svc restore` (docs/operations.md, "Backups"), `svc move` ("Moving to PostgreSQL"). The work is in src/data/, loaded
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

  program
    .command('move')
    .description(
      "copy this instance's SQLite database into an empty PostgreSQL database, every row checked (stop the server first); then run the server with SVC_DATABASE_URL set to it",
    )
    .requiredOption(
      '--to <url>',
      'the empty PostgreSQL database, postgres://user@host:port/name (leave the password out and set PGPASSWORD)',
    )
    .action(async (opts: { to: string }) => {
      if (!/^postgres(ql)?:\/\//.test(opts.to)) {
        io.err('svc: --to takes a PostgreSQL URL, postgres://user@host:port/name\n');
        setExit(EXIT.usage);
        return;
      }
      const [{ config, secrets }, { moveToPostgres }, { Progress }, { openAppDatabase }, log] =
        await Promise.all([
          cliConfig(io),
          import('../data/move.js'),
          import('../data/progress.js'),
          import('../app-database.js'),
          cliLogger(io),
        ]);
      if (secrets.databaseUrl !== null) {
        io.err(
          'svc: SVC_DATABASE_URL is set, so this instance already runs on PostgreSQL; svc move copies the SQLite database of SVC_DATA_DIR: run it with SVC_DATABASE_URL unset\n',
        );
        setExit(EXIT.usage);
        return;
      }
      const { Secrets } = await import('../config/secrets.js');
      const target = new Secrets(opts.to, secrets.redisUrl, secrets.smtpPassword);
      const result = await moveToPostgres(
        config.dataDir,
        opts.to,
        () => openAppDatabase(config, target, log, { passive: true }),
        new Progress('move', io.err, io.errIsTty ?? false),
      );
      printJson(io, {
        moved: path.join(config.dataDir, 'svc.sqlite'),
        to: redactedUrl(opts.to),
        schema: result.schema,
        counts: result.counts,
        migrationsApplied: result.migrationsApplied,
        files: path.join(config.dataDir, 'blobs'),
        next: 'set SVC_DATABASE_URL to this database (SVC_DATA_DIR unchanged) and start the server',
      });
    });
}

/** A URL with its password, if any, left out (what the command prints). */
function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://...';
  }
}
