import { Command, CommanderError } from 'commander';

import { ConfigError } from '../config/config-error.js';
import { AppError } from '../errors.js';
import { readVersion } from '../version.js';

import { registerAbuseReportCommands } from './abuse-report-commands.js';
import { registerAccountCommands } from './account-commands.js';
import { registerAuditCommands } from './audit-commands.js';
import { registerDataCommands } from './data-commands.js';
import { registerExportCommands } from './export-commands.js';
import { registerImportCommands } from './import-commands.js';
import { registerInviteCommands } from './invite-commands.js';
import { registerIpCommands } from './ip-commands.js';
import { registerOperatorCommands } from './operator-commands.js';
import { registerPrincipalCommands } from './principal-commands.js';
import { registerSearchCommands } from './search-commands.js';
import { registerSessionCommands } from './session-commands.js';
import { registerMcpCommands } from './mcp-commands.js';
import { registerServerKeyCommands } from './server-key-commands.js';

export { EXIT, printJson, withContext, type CliIo } from './io.js';
import { cliConfig, cliLogger, EXIT, type CliIo } from './io.js';

// Only commander and the command modules load here; the server (main.ts) loads when `serve` or
// `migrate` runs, so `svc --help` answers without it (io.ts says how the modules keep that).

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = new Command();
  let exitCode: number = EXIT.ok;
  program
    .name('svc')
    .description(
      'svc messaging server: run it and operate it. Reads the same SVC_* environment as the server.',
    )
    .version(readVersion())
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });

  program
    .command('serve')
    .description('run the server (API, WebSocket, jobs) until SIGTERM or SIGINT')
    .action(async () => {
      // Listen for signals before booting (and before loading the server), so one that arrives
      // during boot is not lost (nor kills the process half-way); it stops the server as soon as
      // it is up. `once`: a second signal while stopping gets the default action and ends the
      // process at once.
      let received: string | null = null;
      let onSignal = (signal: string) => {
        received = signal;
      };
      process.once('SIGTERM', () => onSignal('SIGTERM'));
      process.once('SIGINT', () => onSignal('SIGINT'));
      const [{ config, secrets }, { startServer }, { unknownVariables }] = await Promise.all([
        cliConfig(io),
        import('../main.js'),
        import('../config/index.js'),
      ]);
      const server = await startServer(config, secrets);
      const unknown = unknownVariables(io.env);
      if (unknown.length > 0) {
        server.ctx.log.warn({ variables: unknown }, 'unknown SVC_* variables are ignored');
      }
      await new Promise<void>((resolve) => {
        onSignal = (signal: string) => {
          server.ctx.log.info({ signal }, 'signal received');
          server.stop().then(resolve, (err) => {
            server.ctx.log.error({ err }, 'shutdown failed');
            exitCode = EXIT.failed;
            resolve();
          });
        };
        if (received !== null) onSignal(received);
      });
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit (the server also does this at boot)')
    .action(async () => {
      const [{ config, secrets }, { migrateDatabase }, log] = await Promise.all([
        cliConfig(io),
        import('../main.js'),
        cliLogger(io),
      ]);
      await migrateDatabase(config, secrets, { log });
      io.out('migrations are up to date\n');
    });

  registerAccountCommands(program, io);
  registerOperatorCommands(program, io);
  registerIpCommands(program, io);
  registerPrincipalCommands(program, io);
  registerSessionCommands(program, io);
  registerAbuseReportCommands(program, io);
  registerAuditCommands(program, io);
  registerInviteCommands(program, io);
  registerSearchCommands(program, io);
  registerMcpCommands(program, io);
  registerServerKeyCommands(program, io);
  registerDataCommands(program, io, (code) => (exitCode = code));
  registerExportCommands(program, io);
  registerImportCommands(program, io, (code) => (exitCode = code));

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    return handleError(err, io);
  }
  return exitCode;
}

function handleError(err: unknown, io: CliIo): number {
  if (err instanceof CommanderError) {
    // Commander has printed the help or the error already. Help asked for (`--help`, `help`,
    // `--version`) exits 0; help shown because a command is missing (`svc`, `svc ip`) is bad usage.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof ConfigError) {
    io.err(`svc: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof AppError) {
    io.err(`svc: ${err.message} (${err.code})\n`);
    return EXIT.failed;
  }
  io.err(`svc: ${(err as Error).message ?? String(err)}\n`);
  return EXIT.failed;
}

export type { Config } from '../config/index.js';
