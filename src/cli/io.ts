import type { AppContext } from '../context.js';
import { createAppContext } from '../context.js';
import { loadConfig } from '../config/index.js';
import { loadSecrets } from '../config/secrets.js';
import { createLogger } from '../logger.js';

// What every command module shares: the output, exit codes and the opened context. Kept apart
// from run.ts, which imports every command module, so the modules do not import it back.

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readStdin(): Promise<string>;
  env: NodeJS.ProcessEnv;
}

/** Exit codes: 0 done, 1 refused or failed, 2 bad usage or configuration. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** The CLI's log: warnings and worse, on standard error. */
export const cliLogger = (io: CliIo) =>
  createLogger('warn', { write: (s: string) => io.err(s) } as never);

/**
 * Opens the server's database with the same SVC_* settings, runs `fn`, closes. Refuses a
 * database with pending migrations (PendingMigrationsError: run `svc migrate` first).
 */
export async function withContext<T>(io: CliIo, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const ctx = await createAppContext(config, loadSecrets(io.env), {
    passive: true,
    log: cliLogger(io),
  });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}
