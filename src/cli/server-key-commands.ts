import type { Command } from 'commander';

import { printJson, withContext, type CliIo } from './io.js';

/**
 * `svc server-key rotate`: a new server signing key, announced in the key log with an entry
 * signed by the old key (docs/federation.md, "Rotating the server key"). Running servers take
 * it up within seconds; peers follow it through the key log.
 */
export function registerServerKeyCommands(program: Command, io: CliIo): void {
  const serverKey = program
    .command('server-key')
    .description("show or rotate the server's signing key (discovery key log)");
  serverKey
    .command('show')
    .description('print the current key and the length of the key log')
    .action(async () => {
      await withContext(io, async (ctx) => {
        await ctx.federation.keyLog.refresh(true);
        printJson(io, {
          key: ctx.federation.keyLog.currentKey(),
          entries: ctx.federation.keyLog.entries().length,
        });
      });
    });
  serverKey
    .command('rotate')
    .description('replace the signing key; the key log gets an entry signed by the old key')
    .action(async () => {
      await withContext(io, async (ctx) => {
        const rotated = await ctx.federation.keyLog.rotate();
        printJson(io, rotated);
      });
    });
}
