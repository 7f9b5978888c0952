import type { AppContext } from '../context.js';
import { createAppContext } from '../context.js';
import { loadConfig } from '../config/index.js';
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

/** Opens the server's database with the same SVC_* settings, runs `fn`, closes. */
export async function withContext<T>(io: CliIo, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const ctx = await createAppContext(config, {
    passive: true,
    log: createLogger('warn', { write: (s: string) => io.err(s) } as never),
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
