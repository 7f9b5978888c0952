import type { Logger } from 'pino';

import type { AppContext } from '../context.js';
import type { Db } from '../db/database.js';
import type { Config } from '../config/index.js';
import type { Secrets } from '../config/secrets.js';

// What every command module shares: the output, exit codes and the opened context. Kept apart
// from run.ts, which imports every command module, so the modules do not import it back.
//
// Nothing here loads the server at import time: `svc --help` and `svc --version` read only the
// command modules, and each command loads what it uses when it runs (docs/cli.md, "Start-up").
// Keep it so: a command module imports types, commander and small helpers at the top, and
// everything else with `await import()` inside its action.

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string>;
  env: NodeJS.ProcessEnv;
  /** Whether standard error is a terminal (progress bars); false when not given. */
  errIsTty?: boolean;
}

/** Exit codes: 0 done, 1 refused or failed, 2 bad usage or configuration. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** The CLI's log: warnings and worse, on standard error. */
export async function cliLogger(io: CliIo): Promise<Logger> {
  const { createLogger } = await import('../logger.js');
  return createLogger('warn', { write: (s: string) => io.err(s) } as never);
}

/** The configuration and secrets from the command's environment (ConfigError when invalid). */
export async function cliConfig(io: CliIo): Promise<{ config: Config; secrets: Secrets }> {
  const [{ loadConfig }, { loadSecrets }] = await Promise.all([
    import('../config/index.js'),
    import('../config/secrets.js'),
  ]);
  return { config: loadConfig(io.env), secrets: loadSecrets(io.env) };
}

/**
 * Opens the server's database with the same SVC_* settings, runs `fn`, closes. Refuses a
 * database with pending migrations (PendingMigrationsError: run `svc migrate` first).
 */
export async function withContext<T>(io: CliIo, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const [{ config, secrets }, { createAppContext }, log] = await Promise.all([
    cliConfig(io),
    import('../context.js'),
    cliLogger(io),
  ]);
  const ctx = await createAppContext(config, secrets, { passive: true, log });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

/** What a command that needs only the database gets. */
export interface CliDatabase {
  config: Config;
  secrets: Secrets;
  log: Logger;
  db: Db;
}

/**
 * Opens only the database (no services, keys, events or jobs), refusing one with pending
 * migrations unless `allowPending`, runs `fn`, closes. For commands that need nothing else.
 */
export async function withDatabase<T>(
  io: CliIo,
  fn: (open: CliDatabase) => Promise<T>,
  opts: { allowPending?: boolean } = {},
): Promise<T> {
  const [{ config, secrets }, { openAppDatabase }, { assertMigrated }, log] = await Promise.all([
    cliConfig(io),
    import('../app-database.js'),
    import('../db/migrate.js'),
    cliLogger(io),
  ]);
  const db = openAppDatabase(config, secrets, log, { passive: true });
  try {
    if (!opts.allowPending) await assertMigrated(db);
    return await fn({ config, secrets, log, db });
  } finally {
    await db.close();
  }
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
