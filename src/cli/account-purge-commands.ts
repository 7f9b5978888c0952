import type { Command } from 'commander';

import { printJson, withContext, type CliIo } from './io.js';

/**
 * `svc account purge [--now]`: runs the account purge of the hourly job once, here and now
 * (docs/account-deletion.md). Sessions it ends on a running server close within
 * SVC_WS_SESSION_RECHECK_SECS.
 */
export function registerAccountPurgeCommand(account: Command, io: CliIo): void {
  account
    .command('purge')
    .description(
      'purge the accounts whose deletion grace period has ended (what the hourly job does)',
    )
    .option(
      '--now',
      'also purge accounts whose deletion is pending but whose grace period has not ended yet',
    )
    .action(async (opts: { now?: boolean }) => {
      await withContext(io, async (ctx) => {
        const purged = await ctx.services.accountDeletion.purgeDue(ctx.clock.now().getTime(), {
          ignoreGrace: opts.now === true,
        });
        printJson(io, { purged: purged.length, accountIds: purged });
      });
    });
}
